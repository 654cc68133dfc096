import { createHash } from "node:crypto";
import path from "node:path";

/** The folder beside test files that holds their cassettes. */
export const CASSETTES = "__cassettes__";

/** A case name longer than this is cut in its file name, and a digest of the whole name added (file names stop at 255 bytes). */
const MAX_NAME = 100;

/**
 * Where a case's cassette is: `__cassettes__/<test file name>/<case>.yaml` beside the test file. The folder is the
 * whole file name (`x.test.yaml`), so `x.test.yaml` and `x.test.json` beside it never share a cassette.
 */
export function cassetteFile(testFile: string, caseName: string): string {
  return path.join(cassetteFolder(testFile), `${cassetteName(caseName)}.yaml`);
}

/** The folder of a test file's cassettes. */
export function cassetteFolder(testFile: string): string {
  return path.join(path.dirname(testFile), CASSETTES, path.basename(testFile));
}

/**
 * The folder lllm wrote a test file's cassettes to before it was named by the whole file name: the name without
 * `.yaml`/`.yml`/`.json` (`__cassettes__/x.test/`). Read when the case has no cassette under the new name.
 */
export function legacyCassetteFolder(testFile: string): string {
  return path.join(path.dirname(testFile), CASSETTES, path.basename(testFile).replace(/\.(ya?ml|json)$/i, ""));
}

/**
 * A case's name as a file name: letters, digits, `.`, `_` and `-`; anything else becomes `-`. A long name is cut,
 * with the start of its SHA-256 added so that two long names that start alike keep files of their own.
 */
export function cassetteName(caseName: string): string {
  const name = caseName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "");
  if (name.length > MAX_NAME) return `${name.slice(0, MAX_NAME - 9).replace(/[-.]+$/, "")}-${createHash("sha256").update(caseName).digest("hex").slice(0, 8)}`;
  return name === "" ? "case" : name;
}
