import { availableParallelism } from "node:os";
import { displayPath } from "../config/displayPath.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import type { CaseResult } from "./CaseResult.js";
import { CaseStatusLog } from "./CaseStatusLog.js";
import { checkLiveModels } from "./checkLiveModels.js";
import { findTestFiles } from "./findTestFiles.js";
import { loadTestFile } from "./loadTestFile.js";
import { planCases, type Plan, type PlannedCase } from "./planCases.js";
import type { Reporter, TestRunSummary } from "./reporters/Reporter.js";
import { runCase } from "./runCase.js";
import type { TestFile } from "./TestFile.js";
import { roundCost } from "../util/roundCost.js";

export interface RunTestsOptions {
  /** Test files and folders (searched for `*.test.yaml`, `*.test.yml`, `*.test.json`); default the working folder. */
  paths?: string[];
  /** Run the cases without a cassette live and write theirs (the others replay). */
  record?: boolean;
  /** Run every case live and write its cassette again. */
  update?: boolean;
  /** Never call a model: a case without a cassette fails. */
  offline?: boolean;
  /** Only the cases whose name (or `file › name`) contains this text, ignoring case. */
  filter?: string;
  /** Cases running at once; default the number of CPUs. */
  concurrency?: number;
  /** Start no case after the first failure. */
  bail?: boolean;
  reporters?: Reporter[];
  /** `false`: the runs are not recorded in the run store (LLLM_LOG=0 and `log: false` in the settings do the same). */
  log?: boolean;
  /** Stops the run: no case starts, running ones are interrupted. */
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Told what should not stop the run (a store that cannot be written, a cassette not written). */
  warn?: (message: string) => void;
  cwd?: string;
}

/** The outcome of `runTests`: the summary the reporters got, and whether every case passed. */
export interface TestRun extends TestRunSummary {
  ok: boolean;
}

/**
 * `lllm test`: load every test file and check it, with its tactic and cassettes, and the keys of the models the
 * live cases call, before anything runs (a bad file or a missing key is a `ConfigError`, exit 2, nothing run); then
 * run the cases, at most `concurrency` at once, each replayed from its cassette when it has one and live otherwise
 * (see the options), and tell the reporters. A `filter` that matches no case is a failed run (`ok: false`).
 */
export async function runTests(options: RunTestsOptions = {}): Promise<TestRun> {
  if (options.offline && (options.record || options.update)) {
    throw new ConfigError("test_usage", `--offline cannot ${options.update ? "--update" : "--record"}: recording calls the models`, { hint: "Record first (lllm test --record, with a key or a local server), then run offline." });
  }
  const started = performance.now();
  const warn = options.warn ?? ((message: string) => process.stderr.write(`lllm: warning: ${message}\n`));
  const files = await loadAll(findTestFiles(options.paths ?? [], options.cwd));
  const plan = planCases(files, options);
  const { planned, filteredOut } = plan;
  if (!options.offline) checkLiveModels(planned, options.env ?? process.env);
  notePlan(plan, warn);
  const concurrency = Math.max(1, options.concurrency ?? availableParallelism());
  const reporters = options.reporters ?? [];
  const modes = { replay: 0, live: 0, record: 0 };
  for (const entry of planned) modes[entry.mode] += 1;
  for (const reporter of reporters) reporter.onRunStart?.({ files: files.length, cases: planned.length, modes, ...(options.offline ? { offline: true } : {}), concurrency });

  const statusLog = new CaseStatusLog({ ...(options.env ? { env: options.env } : {}), warn });
  const results: Array<CaseResult | undefined> = planned.map(() => undefined);
  let bailed = false;
  let next = 0;
  const report = (index: number, result: CaseResult): void => {
    results[index] = result;
    if (result.status === "failed" && options.bail) bailed = true;
    for (const reporter of reporters) reporter.onCaseResult?.(result);
  };
  const worker = async (): Promise<void> => {
    while (next < planned.length && !bailed && !options.signal?.aborted) {
      const index = next++;
      report(index, await runPlanned(planned[index]!, options, warn, statusLog).catch((error: unknown) => internalError(planned[index]!, error)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, planned.length) }, worker));
  statusLog.flush();
  const interrupted = options.signal?.aborted ?? false;
  const all = results.map((result, index) => result ?? skipped(planned[index]!, interrupted ? "interrupted" : "not run: --bail after a failure"));
  for (const [index, result] of all.entries()) if (results[index] === undefined) for (const reporter of reporters) reporter.onCaseResult?.(result);
  const unmatched = options.filter !== undefined && planned.length === 0 ? { unmatchedFilter: options.filter } : {};
  const summary = summarize(all, { durationMs: Math.round(performance.now() - started), bailed, interrupted, filteredOut, ...unmatched });
  for (const reporter of reporters) await reporter.onRunEnd?.(summary);
  return { ...summary, ok: summary.failed === 0 && !interrupted && summary.unmatchedFilter === undefined };
}

/** Load every file; the problems of all of them are reported together. */
async function loadAll(paths: string[]): Promise<TestFile[]> {
  const files: TestFile[] = [];
  const problems: ConfigProblem[] = [];
  let code: ConstructorParameters<typeof ConfigError>[0] = "test_invalid";
  for (const file of paths) {
    try {
      files.push(await loadTestFile(file));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      if (paths.length === 1) throw error;
      problems.push(...error.problems);
      code = error.code;
    }
  }
  if (problems.length > 0) throw ConfigError.fromProblems(code, problems);
  return files;
}

/**
 * What the plan says about cassettes that replay with less than today's checks: folders of the old name (read, to be
 * renamed), and cassettes recorded before the model and the tools offered were kept (their replays cannot check them).
 */
function notePlan(plan: Plan, warn: (message: string) => void): void {
  for (const [old, now] of plan.legacyFolders) {
    warn(`cassettes read from ${displayPath(old)}, the folder's old name; rename it so that \`--record\` and \`--update\` write beside them: mv ${displayPath(old)} ${displayPath(now)}`);
  }
  const unchecked = plan.planned.filter((entry) => entry.mode === "replay" && entry.cassette?.withoutSetup);
  if (unchecked.length === 0) return;
  const files = [...new Set(unchecked.map((entry) => entry.testFile.shown))];
  const shown = unchecked.slice(0, 3).map((entry) => displayPath(entry.cassette!.file)).join(", ") + (unchecked.length > 3 ? ` and ${unchecked.length - 3} more` : "");
  warn(
    `${unchecked.length === 1 ? "a cassette was" : `${unchecked.length} cassettes were`} recorded before lllm kept each agent's model and the tools as the model read them (${shown}): ` +
      `their replays check the messages and the tool results, not the model or the tools' descriptions and parameters. Record again to check those too: lllm test ${files.join(" ")} --update`,
  );
}

/** A case the runner itself failed on (a bug): the case fails with the reason, the other cases and the reports go on. */
function internalError(entry: PlannedCase, error: unknown): CaseResult {
  return { ...skipped(entry, ""), status: "failed", problem: { kind: "error", message: `internal error: ${error instanceof Error ? error.message : String(error)}`, hint: "Report it if it is a bug." } };
}

async function runPlanned(entry: PlannedCase, options: RunTestsOptions, warn: (message: string) => void, statusLog: CaseStatusLog): Promise<CaseResult> {
  if (options.offline && !entry.cassette) {
    return {
      ...skipped(entry, ""),
      status: "failed",
      problem: { kind: "no_cassette", message: `no cassette (${entry.cassetteFile}), and --offline calls no model`, hint: `Record it: lllm test ${entry.testFile.shown} --record` },
    };
  }
  return runCase({
    testFile: entry.testFile,
    testCase: entry.testCase,
    mode: entry.mode,
    ...(entry.cassette ? { cassette: entry.cassette } : {}),
    cassetteFile: entry.cassetteFile,
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.env ? { env: options.env } : {}),
    warn,
    statusLog,
  });
}

function skipped(entry: PlannedCase, reason: string): CaseResult {
  return {
    file: entry.testFile.shown,
    name: entry.testCase.name,
    status: "skipped",
    mode: entry.mode,
    ...(reason ? { skipReason: reason } : {}),
    assertions: [],
    score: 0,
    error: null,
    runIds: [],
    durationMs: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0 },
    cost: 0,
  };
}

function summarize(results: CaseResult[], extra: Pick<TestRunSummary, "durationMs" | "bailed" | "interrupted" | "filteredOut" | "unmatchedFilter">): TestRunSummary {
  const count = (status: CaseResult["status"]): number => results.filter((result) => result.status === status).length;
  const total = (value: (result: CaseResult) => number): number => results.reduce((sum, result) => sum + value(result), 0);
  return {
    results,
    passed: count("passed"),
    failed: count("failed"),
    skipped: count("skipped"),
    cost: roundCost(total((result) => result.cost ?? 0)),
    costUnknown: results.filter((result) => result.cost === null).length,
    usage: {
      promptTokens: total((result) => result.usage.promptTokens),
      completionTokens: total((result) => result.usage.completionTokens),
      totalTokens: total((result) => result.usage.totalTokens),
      llmCalls: total((result) => result.usage.llmCalls),
    },
    ...extra,
  };
}
