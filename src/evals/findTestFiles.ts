import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../config/displayPath.js";
import { ConfigError } from "../errors.js";

/** How a test file's name ends. */
export const TEST_FILE = /\.test\.(ya?ml|json)$/i;

/** Folders never searched: dependencies, version control, cassettes. */
const SKIPPED = new Set(["node_modules", ".git", "__cassettes__", "dist"]);

/**
 * Other tools' files whose names end as a test file's (TypeScript's `tsconfig.test.json`, at the root of many
 * projects): a search skips them; named on the command line, they are read as test files.
 */
const OTHER_TOOLS = /^(tsconfig|jsconfig)\b/i;

/**
 * The test files to run, in a stable order: each file given, and every `*.test.yaml` / `*.test.yml` /
 * `*.test.json` under each folder given (searched recursively; hidden folders, node_modules and __cassettes__
 * skipped, and `tsconfig.test.json`-like files of other tools). A path that does not exist, or nothing to run, is a usage error.
 */
export function findTestFiles(paths: readonly string[], cwd = process.cwd()): string[] {
  const found = new Set<string>();
  for (const given of paths.length > 0 ? paths : ["."]) {
    const absolute = path.resolve(cwd, given);
    let isFolder: boolean;
    try {
      isFolder = statSync(absolute).isDirectory();
    } catch {
      throw new ConfigError("test_no_files", `no such test file or folder: ${given}`, { location: { file: given }, hint: "Give test files (*.test.yaml, *.test.json) or folders holding them." });
    }
    if (!isFolder) found.add(absolute);
    else {
      const before = found.size;
      search(absolute, found);
      if (found.size === before && paths.length > 0) throw new ConfigError("test_no_files", `no test files (*.test.yaml, *.test.yml, *.test.json) under ${displayPath(absolute)}`, { hint: "A package's tests live in its tests/ folder by convention." });
    }
  }
  if (found.size === 0) throw new ConfigError("test_no_files", `no test files (*.test.yaml, *.test.yml, *.test.json) under ${displayPath(path.resolve(cwd))}`, { hint: "Give test files or folders (lllm test tests/), or add a *.test.yaml (see `lllm schema test`)." });
  return [...found].sort();
}

function search(folder: string, found: Set<string>): void {
  for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name) && !entry.name.startsWith(".")) search(path.join(folder, entry.name), found);
    } else if (entry.isFile() && TEST_FILE.test(entry.name) && !OTHER_TOOLS.test(entry.name)) found.add(path.join(folder, entry.name));
  }
}
