import { runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess, type InProcessOptions } from "../helpers/runCliInProcess.js";
import type { RunRecord, RunSummary } from "../../src/store/RunRecord.js";
import { RunSpool } from "../../src/store/RunSpool.js";
import type { RunEnd } from "../../src/store/SpoolEntry.js";
import { RunStore } from "../../src/store/RunStore.js";
import { encodeOutput } from "../../src/store/storedRows.js";
import { newRunId } from "../../src/util/newRunId.js";

/** Run the CLI with this LLLM_HOME. */
export function cli(home: string, args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runCli(args, { timeoutMs: 90_000, ...options, env: { LLLM_HOME: home, ...options.env } });
}

/**
 * The same in this process (see runCliInProcess): for the reads of the log, and the runs that need no process of
 * their own. A file keeps spawns (`cli`) where a process is the point, and one of each command, end to end.
 */
export function cliInProcess(home: string, args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  return runCliInProcess(args, { ...options, env: { LLLM_HOME: home, ...options.env } });
}

type Runner = (home: string, args: string[]) => Promise<CliResult>;

/** `lllm logs --json`'s runs, read by a spawned CLI (`listRunsInProcess`: in this process). */
export const listRuns = (home: string, extra: string[] = []): Promise<RunSummary[]> => runsListed(cli, home, extra);
export const listRunsInProcess = (home: string, extra: string[] = []): Promise<RunSummary[]> => runsListed(cliInProcess, home, extra);
/** `lllm logs show ID --json`'s record, read by a spawned CLI (`showRunInProcess`: in this process). */
export const showRun = (home: string, id = "last"): Promise<RunRecord> => runShown(cli, home, id);
export const showRunInProcess = (home: string, id = "last"): Promise<RunRecord> => runShown(cliInProcess, home, id);

async function runsListed(run: Runner, home: string, extra: string[]): Promise<RunSummary[]> {
  const result = await run(home, ["logs", "--json", ...extra]);
  if (result.code !== 0) throw new Error(`lllm logs failed: ${result.stderr}`);
  const listing = JSON.parse(result.stdout) as { schema_version: number; runs: RunSummary[] };
  if (listing.schema_version !== 1) throw new Error(`lllm logs --json: no schema_version 1 in ${result.stdout.slice(0, 200)}`);
  return listing.runs;
}

async function runShown(run: Runner, home: string, id: string): Promise<RunRecord> {
  const result = await run(home, ["logs", "show", id, "--json"]);
  if (result.code !== 0) throw new Error(`lllm logs show failed: ${result.stderr}`);
  const { schema_version: version, ...record } = JSON.parse(result.stdout) as RunRecord & { schema_version: number };
  if (version !== 1) throw new Error(`lllm logs show --json: no schema_version 1 in ${result.stdout.slice(0, 200)}`);
  return record;
}

/** A run to seed straight into a store (no CLI): what the viewer's list filters on. */
export interface SeedRun {
  startedAt: number;
  tactic: string;
  status?: "ok" | "error" | "budget";
  batchId?: string;
  input: string;
  output?: string;
  /** An `lllm test` case's run, and the case's outcome. */
  test?: { file: string; case: string; status: "passed" | "failed" };
}

/**
 * Write runs as a process records them (its spool), much faster than running them, each with the id a run started
 * then gets; then merge them into the store as the next reader does.
 */
export function seedRuns(file: string, runs: SeedRun[]): string[] {
  const spool = RunSpool.of(file);
  try {
    return runs.map((run) => {
      const id = newRunId(run.startedAt);
      spool.append({ begin: { id, startedAt: run.startedAt, tacticPath: `/seed/${run.tactic}.yaml`, tacticName: run.tactic, configDigest: "seed", input: run.input, vars: {}, models: ["gpt-4o-mini"], lllmVersion: "seed", ...(run.batchId ? { batchId: run.batchId } : {}), ...(run.test ? { test: { file: run.test.file, case: run.test.case } } : {}) } }, { now: false });
      const status = run.status ?? "ok";
      const end: RunEnd = {
        endedAt: run.startedAt + 400,
        status,
        exitCode: status === "ok" ? 0 : status === "budget" ? 3 : 1,
        errorCode: status === "ok" ? null : `seed_${status}`,
        errorMessage: status === "ok" ? null : "seeded failure",
        output: status === "ok" ? encodeOutput(run.output ?? `answer to ${run.input}`) : null,
        details: null,
        models: ["gpt-4o-mini"],
        llmCalls: 1,
        cost: 0.0012,
        durationMs: 400,
        promptTokens: 120,
        cachedPromptTokens: 0,
        completionTokens: 30,
        reasoningTokens: 0,
      };
      spool.append({ finish: { run: id, end } }, { now: false });
      if (run.test) spool.append({ test: { runs: [id], status: run.test.status } }, { now: false });
      return id;
    });
  } finally {
    spool.close();
    const store = RunStore.openSync(file);
    store.refresh();
    store.close();
  }
}
