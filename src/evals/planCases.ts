import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../config/displayPath.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import type { CaseMode } from "./CaseResult.js";
import { cassetteFile, cassetteFolder, cassetteName, legacyCassetteFolder } from "./cassettes/cassetteFile.js";
import { checkCassettePath } from "./cassettes/cassettePath.js";
import { readCassette, type Cassette } from "./cassettes/readCassette.js";
import { TEST_FILE } from "./findTestFiles.js";
import { tacticName } from "./runCase.js";
import type { TestCase, TestFile } from "./TestFile.js";

export interface PlannedCase {
  testFile: TestFile;
  testCase: TestCase;
  mode: CaseMode;
  cassette?: Cassette;
  /** Where the case's cassette is written (`record`). */
  cassetteFile: string;
}

export interface Plan {
  planned: PlannedCase[];
  /** Cases left out by the filter. */
  filteredOut: number;
  /** Cassette folders read under their old name (`__cassettes__/x.test/`), with the name they should have now. */
  legacyFolders: Map<string, string>;
}

/**
 * Which cases run, and how: each case's cassette is read (and checked) now, so a corrupt one stops everything. A
 * case replays its cassette when it has one, else runs live (`record`: and writes it); `update` records every case.
 * Two test files whose cassette folders differ only by case, which share one folder on macOS and Windows, are
 * refused first.
 */
export function planCases(files: readonly TestFile[], options: { filter?: string; record?: boolean; update?: boolean }): Plan {
  checkFolderNames(files);
  const filter = options.filter?.toLowerCase();
  const planned: PlannedCase[] = [];
  const legacyFolders = new Map<string, string>();
  const checkedFolders = new Set<string>();
  let filteredOut = 0;
  const problems: ConfigProblem[] = [];
  let code: ConstructorParameters<typeof ConfigError>[0] = "test_cassette_invalid";
  for (const testFile of files) {
    const legacy = legacyFolderOf(testFile.file);
    for (const testCase of testFile.cases) {
      if (filter !== undefined && !`${testFile.shown} › ${testCase.name}`.toLowerCase().includes(filter)) {
        filteredOut += 1;
        continue;
      }
      const file = cassetteFile(testFile.file, testCase.name);
      let cassette: Cassette | undefined;
      try {
        // Checked in every mode: a replay would read through a link, a recording write through it.
        const expected = { tactic: tacticName(testFile), testFile: testFile.file, checkedFolders };
        if (options.update) checkCassettePath(file, { checkedFolders });
        else {
          cassette = readCassette(file, expected);
          const old = legacy === undefined || cassette ? undefined : path.join(legacy, `${cassetteName(testCase.name)}.yaml`);
          if (old !== undefined && (cassette = readCassette(old, expected))) legacyFolders.set(legacy!, cassetteFolder(testFile.file));
        }
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        problems.push(...error.problems);
        code = error.code;
      }
      const mode: CaseMode = options.update ? "record" : cassette ? "replay" : options.record ? "record" : "live";
      planned.push({ testFile, testCase, mode, ...(cassette ? { cassette } : {}), cassetteFile: file });
    }
  }
  if (problems.length > 0) throw ConfigError.fromProblems(code, problems);
  return { planned, filteredOut, legacyFolders };
}

/**
 * The old-named cassette folder of a test file when it holds cassettes that can only be this file's: not when
 * another test file beside it has the same name but for its extension (`x.test.yaml` and `x.test.json` wrote into
 * one `x.test/` folder, each over the other's cassettes).
 */
function legacyFolderOf(testFile: string): string | undefined {
  const folder = legacyCassetteFolder(testFile);
  if (!existsSync(folder)) return undefined;
  const stem = path.basename(folder);
  const siblings = readdirSync(path.dirname(testFile)).filter((name) => TEST_FILE.test(name) && name.replace(/\.(ya?ml|json)$/i, "") === stem);
  return siblings.length === 1 ? folder : undefined;
}

/** Test files in one folder whose names differ only by case: their cassette folders would be one on macOS and Windows. */
function checkFolderNames(files: readonly TestFile[]): void {
  const seen = new Map<string, TestFile>();
  const problems: ConfigProblem[] = [];
  for (const testFile of files) {
    const key = cassetteFolder(testFile.file).toLowerCase();
    const first = seen.get(key);
    if (!first) seen.set(key, testFile);
    else {
      problems.push({
        message: `${testFile.shown} and ${first.shown} differ only by case: their cassettes would share one folder (${displayPath(cassetteFolder(testFile.file))}) on macOS and Windows`,
        location: { file: testFile.shown },
        hint: "Rename one of the test files.",
      });
    }
  }
  if (problems.length > 0) throw ConfigError.fromProblems("test_invalid", problems);
}
