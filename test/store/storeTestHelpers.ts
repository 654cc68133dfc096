import { runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import type { RunRecord, RunSummary } from "../../src/store/RunRecord.js";

/** Run the CLI with this LLLM_HOME. */
export function cli(home: string, args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runCli(args, { timeoutMs: 90_000, ...options, env: { LLLM_HOME: home, ...options.env } });
}

export async function listRuns(home: string, extra: string[] = []): Promise<RunSummary[]> {
  const result = await cli(home, ["logs", "--json", ...extra]);
  if (result.code !== 0) throw new Error(`lllm logs failed: ${result.stderr}`);
  const listing = JSON.parse(result.stdout) as { schema_version: number; runs: RunSummary[] };
  if (listing.schema_version !== 1) throw new Error(`lllm logs --json: no schema_version 1 in ${result.stdout.slice(0, 200)}`);
  return listing.runs;
}

export async function showRun(home: string, id = "last"): Promise<RunRecord> {
  const result = await cli(home, ["logs", "show", id, "--json"]);
  if (result.code !== 0) throw new Error(`lllm logs show failed: ${result.stderr}`);
  const { schema_version: version, ...record } = JSON.parse(result.stdout) as RunRecord & { schema_version: number };
  if (version !== 1) throw new Error(`lllm logs show --json: no schema_version 1 in ${result.stdout.slice(0, 200)}`);
  return record;
}
