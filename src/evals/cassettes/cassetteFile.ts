import path from "node:path";

/**
 * Where a case's cassette is: `__cassettes__/<test file name>/<case>.yaml` beside the test file (the file name
 * without `.yaml`/`.json`; the case name made safe for a file name).
 */
export function cassetteFile(testFile: string, caseName: string): string {
  const folder = path.basename(testFile).replace(/\.(ya?ml|json)$/i, "");
  return path.join(path.dirname(testFile), "__cassettes__", folder, `${cassetteName(caseName)}.yaml`);
}

/** A case's name as a file name: letters, digits, `.`, `_` and `-`; anything else becomes `-`. */
export function cassetteName(caseName: string): string {
  const name = caseName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "");
  return name === "" ? "case" : name;
}
