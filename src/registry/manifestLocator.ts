import { SourceDocument } from "../config/SourceDocument.js";
import type { SourceLocation } from "../errors.js";

/** Where a key of a manifest is written: `["package", "name"]` -> the line of `name = …` in `[package]`. */
export type ManifestLocator = (keyPath: readonly string[]) => SourceLocation;

/**
 * A locator for a manifest's text, so that a problem found after parsing (an unknown key, a value of the wrong
 * type) points at its line like a syntax error does. TOML parsers keep no positions, so TOML is scanned line by
 * line for table headers and `key =` lines (enough for a manifest's flat tables); YAML and JSON keep theirs.
 * `prefix` is where the manifest sits in the file (`["lllm"]` in package.json). Unknown places give the file.
 */
export function manifestLocator(options: { file: string; text: string; toml: boolean; prefix?: readonly string[] }): ManifestLocator {
  const { file, text } = options;
  if (options.toml) return (keyPath) => ({ file, ...tomlPosition(text, keyPath) });
  let document: SourceDocument | undefined;
  try {
    document = SourceDocument.parse(text, file, { allowEmpty: true });
  } catch {
    document = undefined;
  }
  return (keyPath) => document?.locateKey([...(options.prefix ?? []), ...keyPath]) ?? { file };
}

function tomlPosition(text: string, keyPath: readonly string[]): { line?: number; column?: number } {
  const wanted = keyPath.join(".");
  let table = "";
  let headerOfWanted: { line: number; column: number } | undefined;
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const header = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) {
      table = header[1]!.replace(/\s+/g, "").replace(/"/g, "");
      if (table === wanted) headerOfWanted ??= { line: index + 1, column: line.indexOf("[") + 1 };
      continue;
    }
    const assignment = /^(\s*)("?)([A-Za-z0-9_-]+)\2\s*=/.exec(line);
    if (assignment && [table, assignment[3]].filter(Boolean).join(".") === wanted) return { line: index + 1, column: assignment[1]!.length + 1 };
  }
  return headerOfWanted ?? {};
}
