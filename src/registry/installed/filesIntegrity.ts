import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** One file of a package: its path (`/`-separated, relative to the package), the sha512 of its bytes, and whether it is executable. */
export interface FileDigest {
  path: string;
  sha512: string;
  executable: boolean;
}

/** The integrity of a package's files, and the digests it is made of. */
export interface FilesIntegrity {
  /** `sha512-<base64>` over the sorted listing of every file's path, mode and digest. */
  integrity: string;
  files: FileDigest[];
}

/** Something in a package folder that is not a plain file or folder (a link, a device): packages hold none. */
export class UnexpectedEntry extends Error {
  constructor(readonly relative: string) {
    super(`${relative} is not a plain file or folder`);
  }
}

/** The files under `dir`, as sorted `/`-separated relative paths. Throws UnexpectedEntry on a link or a special file. */
export function listPackageFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, prefix: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) walk(path.join(folder, entry.name), relative);
      else if (entry.isFile()) found.push(relative);
      else throw new UnexpectedEntry(relative);
    }
  };
  walk(dir, "");
  return found.sort();
}

/** The sha512 of one file, base64. */
export function fileDigest(file: string): string {
  return createHash("sha512").update(readFileSync(file)).digest("base64");
}

/**
 * The integrity of the files of a package folder: the same files with the same bytes and executable bits give the
 * same integrity wherever they were unpacked (timestamps, owners and the order of the archive do not count).
 */
export function filesIntegrity(dir: string): FilesIntegrity {
  const files = listPackageFiles(dir).map((relative) => {
    const file = path.join(dir, ...relative.split("/"));
    return { path: relative, sha512: fileDigest(file), executable: (lstatSync(file).mode & 0o111) !== 0 };
  });
  return { integrity: integrityOfListing(files), files };
}

/** The integrity of a listing of digests (the listing is what `filesIntegrity` hashes). */
export function integrityOfListing(files: readonly FileDigest[]): string {
  const hash = createHash("sha512");
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) hash.update(`${file.path}\0${file.executable ? "x" : "-"}\0${file.sha512}\n`);
  return `sha512-${hash.digest("base64")}`;
}
