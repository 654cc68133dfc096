/** A whole path segment `{name}`: placeholders never share a segment with literal text. */
const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The placeholder's name when `segment` is one (`{city}` -> `city`). */
export function placeholderName(segment: string): string | undefined {
  return PLACEHOLDER.exec(segment)?.[1];
}

/** The names of every `{placeholder}` of a template, in order. */
export function placeholdersOf(template: string): string[] {
  return splitPath(template).flatMap((segment) => {
    const name = placeholderName(segment);
    return name === undefined ? [] : [name];
  });
}

/** Path segments without empty ones, so `a//b/` and `a/b` are the same path. */
export function splitPath(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "");
}

/** The shape of a template, for finding two endpoints that would answer the same calls: `current/{}`. */
export function templateShape(template: string): string {
  return splitPath(template)
    .map((segment) => (placeholderName(segment) === undefined ? segment : "{}"))
    .join("/");
}
