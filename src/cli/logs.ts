import path from "node:path";
import { ConfigError } from "../errors.js";
import { formatDuration, formatTime, formatTranscript } from "../store/formatTranscript.js";
import { parseAge } from "../store/parseAge.js";
import type { RunStatus, RunSummary } from "../store/RunRecord.js";
import { AmbiguousRunIdError, RunStore } from "../store/RunStore.js";
import { formatCost } from "../store/RunTally.js";
import { NO_RUNS_YET, storeFile } from "../store/startRunLog.js";
import { toReplayScript } from "../store/toReplayScript.js";
import { paint, SCHEMA_VERSION, warn, writeErr, writeOut } from "./output.js";
import { settingsWithoutCode } from "./settingsWithoutCode.js";
import { plural } from "../util/plural.js";
import { secrets } from "../util/redact.js";
import { terminalText } from "../util/terminalText.js";
import { mapStrings } from "../util/mapStrings.js";
import { writeOutputFile } from "./writeOutputFile.js";

export interface LogsListOptions {
  number?: string;
  tactic?: string;
  status?: RunStatus;
  since?: string;
  search?: string;
  /** Only the runs `lllm serve` ran. */
  served?: boolean;
  json?: boolean;
}

/** The store's file: the project settings' `home:` (from a data settings file: no code runs), else `$LLLM_HOME`, else `~/.lllm`. */
async function logsFile(): Promise<string> {
  const settings = await settingsWithoutCode("logs");
  return storeFile(process.env, settings.home);
}

/**
 * The store's file, and the store open when anything was recorded (`undefined` when nothing was logged yet). A
 * damaged file is a `StoreError` (exit 1) that says how to recover.
 */
async function openStore(): Promise<{ file: string; store: RunStore | undefined }> {
  const file = await logsFile();
  return { file, store: RunStore.exists(file) ? await RunStore.open(file, { warn }) : undefined };
}

/** `lllm logs`: the runs, newest first. */
export async function logsListCommand(options: LogsListOptions): Promise<void> {
  const limit = options.number === undefined ? 20 : Number(options.number);
  if (!Number.isInteger(limit) || limit <= 0) throw new ConfigError("usage_logs_number", `-n must be a whole number > 0 (got \`${options.number}\`)`, { location: { file: "-n" } });
  let since: number | undefined;
  if (options.since !== undefined) {
    const age = parseAge(options.since);
    if (age === undefined) throw new ConfigError("usage_logs_since", `--since \`${options.since}\` is not an age`, { location: { file: "--since" }, hint: "Give a number and a unit: 90s, 15m, 2h, 30d, 1w." });
    since = Date.now() - age;
  }
  const { file, store } = await openStore();
  const runs = store
    ? withStore(store, (open) =>
        open.listRuns({ limit, ...(options.tactic !== undefined ? { tactic: options.tactic } : {}), ...(options.status !== undefined ? { status: options.status } : {}), ...(since !== undefined ? { since } : {}), ...(options.search !== undefined ? { search: options.search } : {}), ...(options.served ? { served: true } : {}) }),
      )
    : [];
  if (options.json) {
    // One object, like every other `--json` output, so a field can be added later without breaking readers.
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, runs: runs.map((run) => (run.resumable ? { ...run, resume_command: resumeCommand(run.id) } : run)) }, null, 2));
    return;
  }
  if (runs.length === 0) {
    writeErr(store ? "lllm: no runs match" : `lllm: no runs logged yet (${file})`);
    return;
  }
  writeOut(formatTable(runs));
  const resumable = runs.find((run) => run.resumable);
  if (resumable) writeErr(paint("dim", `lllm: runs marked * stopped before their end and can go on from where they stopped: ${resumeCommand(resumable.id)}`));
}

/** How to go on with a run that stopped before its end. */
function resumeCommand(id: string): string {
  return `lllm run --resume ${id}`;
}

/** The ids of the latest runs, newest first, for shell completion; none when nothing was logged yet. */
export async function recentRunIds(limit = 50): Promise<string[]> {
  const { store } = await openStore();
  return store ? withStore(store, (open) => open.listRuns({ limit }).map((run) => run.id)) : [];
}

/** `lllm logs show ID|last`. */
export async function logsShowCommand(id: string, options: { json?: boolean }): Promise<void> {
  const run = await findRun(id);
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, ...run }, null, 2));
    return;
  }
  // On a terminal, what the run holds (answers, tool results, arguments) is escaped before lllm paints its headings:
  // `writeOut` keeps lllm's own colour sequences, so a model's `ESC[32m` or `ESC[1m` would otherwise recolour the
  // transcript (a green "tests passed", everything after it bold). Into a pipe the transcript is data, as it was.
  const shown = process.stdout.isTTY ? mapStrings(run, terminalText) : run;
  writeOut(formatTranscript(shown, { heading: (text) => paint("bold", text, process.stdout), dim: (text) => paint("dim", text, process.stdout) }));
}

/** `lllm logs path`. */
export async function logsPathCommand(options: { json?: boolean } = {}): Promise<void> {
  const file = await logsFile();
  // `--json` (an option of `lllm logs`, so path takes it too): one object, as every command's --json prints.
  writeOut(options.json ? JSON.stringify({ schema_version: SCHEMA_VERSION, path: file }, null, 2) : file);
}

/**
 * `lllm logs prune --older-than 30d [--status S] [--tactic T] [--search W] [--served] [--dry-run]`: the list's filters
 * narrow what is deleted (they were read by `lllm logs` and not by prune, which then deleted every old run).
 */
export async function logsPruneCommand(options: LogsListOptions & { olderThan?: string; dryRun?: boolean }): Promise<void> {
  if (options.olderThan === undefined) throw new ConfigError("usage_logs_prune", "say which runs to delete: --older-than AGE", { location: { file: "--older-than" }, hint: "e.g. lllm logs prune --older-than 30d (--dry-run lists them first)" });
  const age = parseAge(options.olderThan);
  if (age === undefined) throw new ConfigError("usage_logs_prune", `--older-than \`${options.olderThan}\` is not an age`, { location: { file: "--older-than" }, hint: "Give a number and a unit: 90s, 15m, 2h, 30d, 1w." });
  // These pick the newest runs to list: with prune they would read as a limit on what is deleted, and are none.
  for (const [flag, given] of [["-n", options.number], ["--since", options.since]] as const) {
    if (given !== undefined) throw new ConfigError("usage_logs_prune", `${flag} picks runs to list, not to delete: prune deletes the runs older than --older-than that --status, --tactic, --search and --served pick`, { location: { file: flag } });
  }
  const filter = { ...(options.tactic !== undefined ? { tactic: options.tactic } : {}), ...(options.status !== undefined ? { status: options.status } : {}), ...(options.search !== undefined ? { search: options.search } : {}), ...(options.served ? { served: true } : {}) };
  const { store } = await openStore();
  const { count, runs } = store ? withStore(store, (open) => open.prune(Date.now() - age, filter, { dryRun: Boolean(options.dryRun) })) : { count: 0, runs: [] };
  // `--json` (an option of `lllm logs`, so prune took it) printed nothing on stdout: one object, as on failure.
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, ...(options.dryRun ? { dry_run: true, would_delete: count, runs } : { deleted: count }) }, null, 2));
    return;
  }
  const what = `${count} run${count === 1 ? "" : "s"} older than ${options.olderThan}${Object.keys(filter).length > 0 ? " that match" : ""}`;
  if (options.dryRun) {
    if (runs.length > 0) writeOut(formatTable(runs));
    writeErr(`lllm: would delete ${what} (--dry-run: nothing deleted)`);
    return;
  }
  writeErr(`lllm: deleted ${what}`);
}

/** `lllm logs serve [--port N]`: the viewer on 127.0.0.1, behind a token, until Ctrl-C. */
export async function logsServeCommand(options: { port?: string; json?: boolean }): Promise<void> {
  const port = options.port === undefined ? 8765 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError("usage_logs_port", `--port must be a port number 0-65535 (got \`${options.port}\`)`, { location: { file: "--port" } });
  const file = await logsFile();
  const store = await RunStore.open(file, { warn });
  const { serveViewer } = await import("../store/viewer/serveViewer.js");
  let served: Awaited<ReturnType<typeof serveViewer>>;
  try {
    served = await serveViewer({ store, port });
  } catch (error) {
    store.close();
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError("usage_logs_port", code === "EADDRINUSE" ? `port ${port} is in use` : `cannot serve on 127.0.0.1:${port}: ${(error as Error).message}`, { location: { file: "--port" }, hint: "Pick another with --port N (0: any free port)." });
  }
  // The token is shown here, and on stdout with --json, which asked for it: whoever has this address can read every
  // run in the log.
  writeErr(`lllm: the run viewer is at ${served.url} (read-only; the address holds its token: do not share it; Ctrl-C to stop)`);
  // For a script that starts the viewer and opens it: the address as data, once the viewer listens.
  if (options.json) writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, url: served.url }));
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      served.server.close(() => resolve());
      served.server.closeAllConnections();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  store.close();
}

/** `lllm logs replay ID [-o FILE]`: the run's model turns as a `scripted:` model file. */
export async function logsReplayCommand(id: string, options: { output?: string; json?: boolean }): Promise<void> {
  const run = await findRun(id);
  if (run.model_calls.length === 0) throw new ConfigError("store_no_model_calls", `run ${run.id} made no model call: there is nothing to replay`);
  // A key lllm knows now but did not when the run was recorded is in the record as it is. It is redacted here, from
  // each text before it is written as YAML: the file (-o) was written unredacted, and redacting the YAML afterwards
  // turned a value that was the key alone into `[redacted]`, a list, which the replay then refused.
  const script = toReplayScript(mapStrings(run, (text) => secrets.redact(text)));
  const agents = new Set(run.model_calls.map((call) => call.agent)).size;
  // `--json`: one object, the script's YAML in it (or the file it went to), as every command's --json prints.
  const summary = { schema_version: SCHEMA_VERSION, run_id: run.id, turns: run.model_calls.length, agents };
  if (options.output === undefined) {
    writeOut(options.json ? JSON.stringify({ ...summary, script }, null, 2) : script);
    return;
  }
  writeOutputFile("-o", options.output, script, "replay.yaml");
  if (options.json) writeOut(JSON.stringify({ ...summary, file: options.output }, null, 2));
  const tactic = run.tactic_path ? path.relative(process.cwd(), run.tactic_path) || run.tactic_path : "TACTIC";
  writeErr(`lllm: wrote ${plural(run.model_calls.length, "turn")}${agents > 1 ? ` of ${agents} agents` : ""} to ${options.output}; replay with: lllm run ${tactic} --model scripted:${options.output} --input …`);
}

async function findRun(id: string): Promise<NonNullable<ReturnType<RunStore["getRun"]>>> {
  const { file, store } = await openStore();
  if (!store) throw new ConfigError("store_run_not_found", `no run \`${id}\`: no runs logged yet (${file})`, { hint: NO_RUNS_YET });
  const run = withStore(store, (open) => {
    try {
      return open.getRun(id);
    } catch (error) {
      if (error instanceof AmbiguousRunIdError) throw new ConfigError("store_run_ambiguous", error.message, { hint: "Give more characters of the id (see `lllm logs`)." });
      throw error;
    }
  });
  if (!run) throw new ConfigError("store_run_not_found", `no run \`${id}\` in the log`, { hint: "See the ids with `lllm logs`, or use `last`." });
  return run;
}

function withStore<T>(store: RunStore, action: (store: RunStore) => T): T {
  try {
    return action(store);
  } finally {
    store.close();
  }
}

/** Long model names (a `scripted:` path) would push the other columns off the screen. */
function cut(text: string, width: number): string {
  return text.length > width ? `…${text.slice(text.length - width + 1)}` : text;
}

function formatTable(runs: RunSummary[]): string {
  const header = ["ID", "WHEN", "TACTIC", "STATUS", "MODEL", "TOKENS", "COST", "DURATION"];
  const rows = runs.map((run) => [
    run.id,
    formatTime(run.started_at),
    run.tactic_name ?? "-",
    run.resumable ? `${run.status} *` : run.status,
    cut(run.models.join(",") || "-", 32),
    String(run.prompt_tokens + run.completion_tokens),
    formatCost(run.cost),
    formatDuration(run.duration_ms),
  ]);
  const widths = header.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  return [header, ...rows].map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join("  ")).join("\n");
}
