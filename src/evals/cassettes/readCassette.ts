import { existsSync } from "node:fs";
import { displayPath } from "../../config/displayPath.js";
import { ConfigError, type ConfigProblem } from "../../errors.js";
import { readScriptFile } from "../../providers/readScriptFile.js";
import type { Script } from "../../providers/ScriptedTurn.js";
import { isPlainObject } from "../../util/isPlainObject.js";

/** A case's cassette, read and checked: the model's turns to replay. */
export interface Cassette {
  file: string;
  script: Script;
}

/**
 * Read a case's cassette when there is one. A cassette that is not a valid model script is an error naming it
 * (with the line); one recorded for another tactic than the test's is one too: replaying it could only diverge,
 * or worse, pass by accident.
 */
export function readCassette(file: string, expected: { tactic: string; testFile: string }): Cassette | undefined {
  if (!existsSync(file)) return undefined;
  let read: ReturnType<typeof readScriptFile>;
  try {
    read = readScriptFile(file, { what: "cassette" });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const location = (where: ConfigProblem["location"]) => ({ ...where, file: displayPath(file) });
    const problems: ConfigProblem[] = error.problems.map((problem) => ({ ...problem, message: `the cassette is corrupt: ${problem.message}`, location: location(problem.location), hint: problem.hint ?? "Fix it, or delete it and record it again with `lllm test --record` (or re-record every case with --update)." }));
    throw ConfigError.fromProblems("test_cassette_invalid", problems);
  }
  const tactic = isPlainObject(read.data) ? read.data["tactic"] : undefined;
  if (typeof tactic === "string" && tactic !== expected.tactic) {
    throw new ConfigError("test_cassette_other_tactic", `this cassette was recorded for tactic \`${tactic}\`, but ${displayPath(expected.testFile)} tests tactic \`${expected.tactic}\``, {
      location: { file: displayPath(file) },
      hint: "Re-record it with `lllm test --update` (or fix the test file's `tactic:`).",
    });
  }
  return { file, script: read.script };
}
