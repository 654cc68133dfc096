import path from "node:path";

/**
 * The name of a file as messages show it: relative to the working directory when the file is inside it (short, and
 * still clickable in a terminal), absolute otherwise.
 */
export function displayPath(file: string, cwd: string = process.cwd()): string {
  const relative = path.relative(cwd, file);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return file;
  return relative;
}
