import { lstatSync } from "node:fs";
import { displayPath } from "../../config/displayPath.js";
import { ConfigError, type ConfigProblem } from "../../errors.js";
import { readScriptFile } from "../../providers/readScriptFile.js";
import type { Script } from "../../providers/ScriptedTurn.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { CASSETTE_LIMITS, formatSize } from "./cassetteLimits.js";
import { checkCassettePath } from "./cassettePath.js";
import { readSetup, type CassetteSetup } from "./CassetteSetup.js";

/** A case's cassette, read and checked: the model's turns to replay. */
export interface Cassette {
  file: string;
  script: Script;
  /** What the models were and were offered; `undefined`: recorded before lllm kept it, or written by hand. */
  setup?: CassetteSetup;
  /**
   * Recorded (its turns keep the requests they answered) before lllm kept the setup: its replays check the messages
   * and tool results, not the model or the tools' definitions. A cassette written by hand, with no request, is not.
   */
  withoutSetup?: boolean;
}

const RERECORD = "Fix it, or delete it and record it again with `lllm test --record` (or re-record every case with --update).";

/**
 * Read a case's cassette when there is one. A cassette that is not a valid model script is an error naming it
 * (with the line); one recorded for another tactic than the test's is one too: replaying it could only diverge,
 * or worse, pass by accident. A link in its path, or a cassette past `CASSETTE_LIMITS`, is refused before it is read
 * (`checkedFolders`: the cassette folders checked already, so that a thousand cases of a file check theirs once).
 */
export function readCassette(file: string, expected: { tactic: string; testFile: string; checkedFolders?: Set<string> }): Cassette | undefined {
  checkCassettePath(file, expected.checkedFolders ? { checkedFolders: expected.checkedFolders } : {});
  let size: number;
  try {
    const stats = lstatSync(file);
    if (!stats.isFile()) throw new ConfigError("test_cassette_invalid", `the cassette ${displayPath(file)} is not a file`, { location: { file: displayPath(file) }, hint: RERECORD });
    size = stats.size;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    return undefined;
  }
  if (size > CASSETTE_LIMITS.maxBytes) throw tooLarge(file, `it is ${formatSize(size)}; a cassette may be at most ${formatSize(CASSETTE_LIMITS.maxBytes)}`);
  let read: ReturnType<typeof readScriptFile>;
  try {
    read = readScriptFile(file, { what: "cassette" });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const location = (where: ConfigProblem["location"]) => ({ ...where, file: displayPath(file) });
    const problems: ConfigProblem[] = error.problems.map((problem) => ({ ...problem, message: `the cassette is corrupt: ${problem.message}`, location: location(problem.location), hint: problem.hint ?? RERECORD }));
    throw ConfigError.fromProblems("test_cassette_invalid", problems);
  }
  const lists = Array.isArray(read.script) ? [read.script] : Object.values((read.script as { agents: Record<string, readonly unknown[]> }).agents);
  const turns = lists.reduce((total, list) => total + list.length, 0);
  if (turns > CASSETTE_LIMITS.maxTurns) throw tooLarge(file, `it has ${turns} model turns; a cassette may hold at most ${CASSETTE_LIMITS.maxTurns}`);
  const data = isPlainObject(read.data) ? read.data : undefined;
  const tactic = data?.["tactic"];
  if (typeof tactic === "string" && tactic !== expected.tactic) {
    throw new ConfigError("test_cassette_other_tactic", `this cassette was recorded for tactic \`${tactic}\`, but ${displayPath(expected.testFile)} tests tactic \`${expected.tactic}\``, {
      location: { file: displayPath(file) },
      hint: "Re-record it with `lllm test --update` (or fix the test file's `tactic:`).",
    });
  }
  const { setup, problems } = readSetup(data?.["setup"]);
  if (problems.length > 0) throw ConfigError.fromProblems("test_cassette_invalid", problems.map((problem) => ({ message: `the cassette is corrupt: ${problem}`, location: { file: displayPath(file) }, hint: RERECORD })));
  const recorded = lists.some((list) => list.some((turn) => isPlainObject(turn) && turn["request"] !== undefined));
  return { file, script: read.script, ...(setup ? { setup } : recorded ? { withoutSetup: true } : {}) };
}

function tooLarge(file: string, why: string): ConfigError {
  return new ConfigError("config_too_large", `the cassette ${displayPath(file)} is too large to replay: ${why}`, {
    location: { file: displayPath(file) },
    hint: "A real case records far less: delete it, or split the case, and record it again (lllm test --record).",
  });
}
