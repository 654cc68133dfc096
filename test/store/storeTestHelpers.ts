import { runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import type { RunRecord, RunSummary } from "../../src/store/RunRecord.js";

/** Run the CLI with this LLLM_HOME. */
export function cli(home: string, args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runCli(args, { timeoutMs: 90_000, ...options, env: { LLLM_HOME: home, ...options.env } });
}

export async function listRuns(home: string, extra: string[] = []): Promise<RunSummary[]> {
  const result = await cli(home, ["logs", "--json", ...extra]);
  if (result.code !== 0) throw new Error(`lllm logs failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as RunSummary[];
}

export async function showRun(home: string, id = "last"): Promise<RunRecord> {
  const result = await cli(home, ["logs", "show", id, "--json"]);
  if (result.code !== 0) throw new Error(`lllm logs show failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as RunRecord;
}
