import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { TEST_FILE } from "../../evals/findTestFiles.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { yaml } from "../../util/lazyYaml.js";
import { realOrResolved } from "../../util/realPath.js";

/** At most this many examples per skill: a card is read by every client. */
const MAX_EXAMPLES = 5;

/**
 * Example inputs of a tactic for its A2A skill: the inputs of the cases of the test files that test it (`tactic:`
 * naming its file), found in the `tests/` folder of its package (or beside the tactic file); none when it has none.
 * A test file that cannot be read is skipped: a card is no place for its errors (`lllm test` reports them).
 */
export function tacticExamples(prepared: PreparedTactic): string[] {
  const file = prepared.tactic.file;
  const folder = path.dirname(file);
  const packageRoot = path.basename(folder) === "tactics" ? path.dirname(folder) : folder;
  const target = realOrResolved(file);
  const examples: string[] = [];
  for (const testFile of testFilesUnder([path.join(packageRoot, "tests"), folder])) {
    let data: unknown;
    try {
      data = testFile.endsWith(".json") ? JSON.parse(readFileSync(testFile, "utf8")) : yaml.parse(readFileSync(testFile, "utf8"));
    } catch {
      continue;
    }
    if (!isPlainObject(data) || typeof data.tactic !== "string" || realOrResolved(path.resolve(path.dirname(testFile), data.tactic)) !== target) continue;
    for (const testCase of Array.isArray(data.cases) ? data.cases : []) {
      if (!isPlainObject(testCase)) continue;
      const input = testCase.input ?? (Array.isArray(testCase.turns) ? testCase.turns[0] : undefined);
      if (input === undefined) continue;
      const text = typeof input === "string" ? input : JSON.stringify(input);
      if (!examples.includes(text)) examples.push(text);
      if (examples.length >= MAX_EXAMPLES) return examples;
    }
  }
  return examples;
}

function testFilesUnder(folders: string[]): string[] {
  const found = new Set<string>();
  for (const folder of folders) {
    if (!existsSync(folder)) continue;
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isFile() && TEST_FILE.test(entry.name)) found.add(path.join(folder, entry.name));
    }
  }
  return [...found];
}
