import { readFile, stat } from "node:fs/promises";
import { ConfigError } from "../errors.js";
import type { SourceLocation } from "../errors.js";
import { CONFIG_LIMITS } from "./configLimits.js";
import { displayPath } from "./displayPath.js";
import { SourceDocument } from "./SourceDocument.js";

export interface ReadSourceOptions {
  /** What the file is, for messages: `tactic file`, `base file`, `settings file`. */
  what: string;
  /** Where the file was named (e.g. a `base:` line); a missing file is reported there. */
  referencedFrom?: SourceLocation;
  /** How to fix a missing file, printed under the message. */
  missingHint?: string;
}

/**
 * Read and parse a YAML/JSON file (`file` is absolute). A missing or unreadable file is a `ConfigError`
 * (`config_not_found`) naming the path and, when given, the place that referred to it.
 */
export async function readSourceDocument(file: string, options: ReadSourceOptions): Promise<SourceDocument> {
  const shown = displayPath(file);
  let text: string;
  try {
    // Checked before reading, so a huge file is refused without being read into memory.
    const { size, isFile } = await stat(file).then((stats) => ({ size: stats.size, isFile: stats.isFile() }));
    if (isFile && size > CONFIG_LIMITS.maxBytes) {
      throw new ConfigError("config_too_large", `${options.what} ${shown} is ${(size / (1024 * 1024)).toFixed(1)} MB; a config file may be at most ${CONFIG_LIMITS.maxBytes / (1024 * 1024)} MB`, {
        location: { file: shown },
        hint: "split it (a `base:` file, package tools and prompt files) or move long texts into prompt files",
      });
    }
    text = await readFile(file, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const message =
      code === "ENOENT" || code === "ENOTDIR"
        ? `${options.what} not found: ${shown}`
        : code === "EISDIR"
          ? `${options.what} ${shown} is a folder, not a file`
          : `cannot read ${options.what} ${shown}: ${(error as Error).message}`;
    // The file the user named (no place refers to it): the error is that alone, its hint beside it (`--json`'s `hint`).
    if (!options.referencedFrom && options.missingHint) throw new ConfigError("config_not_found", message, { hint: options.missingHint });
    throw ConfigError.fromProblems("config_not_found", [
      { message, ...(options.referencedFrom ? { location: options.referencedFrom } : {}), ...(options.missingHint ? { hint: options.missingHint } : {}) },
    ]);
  }
  return SourceDocument.parse(text, shown);
}
