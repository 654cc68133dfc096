import { statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";

/**
 * Write what a command was asked to write to a file of the user's (`-o FILE`): a folder, a folder that does not
 * exist, or one that cannot be written is the user's to fix (`usage_file`, exit 2), not an internal error.
 * `example` is a file name the hints offer.
 */
export function writeOutputFile(flag: string, file: string, data: string | Uint8Array, example: string): void {
  try {
    writeFileSync(file, data);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = { location: { file: flag }, cause: error };
    if (code === "EISDIR") throw new ConfigError("usage_file", `${flag} ${file}: that is a folder, not a file`, { ...where, hint: `Name a file, e.g. ${flag} ${path.join(file, example)}` });
    const folder = path.dirname(path.resolve(file));
    if ((code === "ENOENT" || code === "ENOTDIR") && !isFolder(folder)) throw new ConfigError("usage_file", `${flag} ${file}: there is no folder ${folder}`, { ...where, hint: `Create the folder first, or name a file in a folder that exists, e.g. ${flag} ${example}` });
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new ConfigError("usage_file", `${flag} ${file}: it cannot be written here (${code === "EROFS" ? "a read-only file system" : "permission denied"})`, { ...where, hint: `Name a file in a folder you can write to, e.g. ${flag} ${example}` });
    throw new ConfigError("usage_file", `${flag} ${file}: it could not be written: ${(error as Error).message}`, where);
  }
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
