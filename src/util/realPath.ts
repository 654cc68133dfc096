import { realpathSync } from "node:fs";
import path from "node:path";

/**
 * A path with its links resolved where it exists, else made absolute: how two names of one file or folder (a
 * package linked from `lllm_packages`, a tactic named through a link) are compared, and how a link inside a folder
 * is followed before deciding whether it points out of it.
 */
export function realOrResolved(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
