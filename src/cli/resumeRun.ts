import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { makePrivateFolder } from "../util/privateFolder.js";
import { processAlive } from "../util/processAlive.js";
import path from "node:path";
import { createInterface } from "node:readline";
import { loadProjectSettings } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { damagedRecord, RunJournal } from "../store/journal/RunJournal.js";
import { setupChanges } from "../store/journal/runSetup.js";
import { unknownOutcome, type ToolStartNote } from "../store/journal/ToolJournal.js";
import type { RunRecord, RunSummary } from "../store/RunRecord.js";
import type { Message } from "../agent/index.js";
import { dialogOfRun } from "../store/dialogOfRun.js";
import { AmbiguousRunIdError, RunStore } from "../store/RunStore.js";
import type { ResumeFlags, ResumeInfo } from "../store/SpoolEntry.js";
import { NO_RUNS_YET, storeFile } from "../store/startRunLog.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import { discardTypedAhead, inTurn } from "../util/terminalTurn.js";
import { warn } from "./output.js";

/** What `lllm run --resume [ID]` goes on with: the run as recorded, its journal, and how it was run. */
export interface ResumedRun {
  record: RunRecord;
  journal: RunJournal;
  /** The tactic to run: the one given, else the run's. */
  target: string;
  info: ResumeInfo;
  /** A run that continued another (`--continue`): that run's dialog, as it was given. */
  history?: Message[];
}

/**
 * The newest of the last runs started from this folder (of `target`, when given) that `lllm logs` marks as able to go
 * on and `--resume ID` takes (a batch item is resumed by its batch).
 */
function lastResumableHere(store: RunStore, target: string | undefined): RunSummary | undefined {
  const tacticPath = target === undefined ? undefined : path.resolve(target);
  return store.listRuns({ limit: 50 }).find((run) => run.resumable && run.batch_id === null && run.cwd === process.cwd() && (tacticPath === undefined || run.tactic_path === tacticPath));
}

/**
 * Find the run to resume and read its journal. `--resume` takes an optional id, so `lllm run --resume tactic.yaml`
 * hands the tactic to the flag: a value that is not an id (ids are letters and digits; `last`) is taken as the
 * tactic. Without an id: the last interrupted or crashed run started from this folder (of that tactic, when given).
 */
export async function findResumedRun(target: string | undefined, flag: string | true, options: { force?: boolean } = {}): Promise<ResumedRun> {
  let id: string | undefined = flag === true ? undefined : flag;
  if (target === undefined && id !== undefined && (!/^[0-9a-z]+$/i.test(id) || existsSync(id))) {
    target = id;
    id = undefined;
  }
  const { settings } = await loadProjectSettings(process.cwd());
  const file = storeFile(process.env, settings.home);
  const where = { location: { file: "--resume" } };
  if (!RunStore.exists(file)) throw new ConfigError("store_run_not_found", `--resume: no runs logged yet (${file})`, { ...where, hint: NO_RUNS_YET });
  const store = await RunStore.open(file, { warn });
  let record: RunRecord | undefined;
  let journal: ReturnType<RunStore["getJournal"]>;
  let continued: RunRecord | null | undefined;
  try {
    // `lllm run --resume --json ID`: an id after another flag reads as the tactic. Taken as the run's when no such
    // file is there (it said "no interrupted or crashed run of ID was started from this folder").
    if (id === undefined && target !== undefined && /^[0-9a-z]+$/i.test(target) && !existsSync(target)) {
      if (store.resolveId(target) === undefined) {
        throw new ConfigError("store_run_not_found", `--resume: ${target} is neither a tactic file nor a run in the log`, {
          ...where,
          hint: "See the runs that can be resumed with `lllm logs` (they are marked), and give the id right after the flag: lllm run --resume ID.",
        });
      }
      id = target;
      target = undefined;
    }
    const runId = id === undefined ? store.lastStopped({ cwd: process.cwd(), ...(target !== undefined ? { tacticPath: path.resolve(target) } : {}) }) : store.resolveId(id);
    if (runId === undefined) {
      // A run stopped by a limit or an error can go on too, by its id only: name the last one of this folder.
      const other = id === undefined ? lastResumableHere(store, target) : undefined;
      throw new ConfigError("store_run_not_found", id === undefined ? `--resume: no interrupted or crashed run${target !== undefined ? ` of ${target}` : ""} was started from this folder` : `--resume: no run \`${id}\` in the log`, {
        ...where,
        hint: other
          ? `The last run started here that can go on ${other.status === "budget" ? "stopped on a limit" : `failed (exit ${other.exit_code ?? "?"})`}: lllm run --resume ${other.id}${other.status === "budget" ? " (give the limit anew, higher: --max-cost, --max-steps …)" : ""}.`
          : "See the runs that can be resumed with `lllm logs` (they are marked), and give the id: lllm run --resume ID.",
      });
    }
    record = store.getRun(runId);
    journal = store.getJournal(runId);
    // A run that continued another started from that run's dialog: so does its resume.
    if (record?.continues_run) continued = store.getRun(record.continues_run) ?? null;
  } catch (error) {
    if (error instanceof AmbiguousRunIdError) throw new ConfigError("store_run_ambiguous", error.message, { ...where, hint: "Give more characters of the id (see `lllm logs`)." });
    throw error;
  } finally {
    store.close();
  }
  if (!record || !journal) throw new ConfigError("store_run_not_found", `--resume: no run \`${id}\` in the log`, { ...where, hint: "See the ids with `lllm logs`." });
  checkResumable(record);
  const info = readResumeInfo(record.id, journal.resume);
  holdRun(record.id, { storeFile: file });
  const tactic = target ?? record.tactic_path;
  if (tactic === null) throw new ConfigError("usage_missing_tactic", `--resume: run ${record.id} has no tactic on record; name it: lllm run TACTIC --resume ${record.id}`);
  let history: Message[] | undefined;
  if (continued !== undefined) {
    const dialog = continued === null ? undefined : dialogOfRun(continued);
    if (!dialog) throw damagedRecord(record.id, `the run it continued (${record.continues_run}) is no longer in the log`);
    history = dialog.messages;
  }
  return { record, journal: new RunJournal({ run: record, tools: journal.tools, ...(options.force ? { force: true } : {}) }), target: tactic, info, ...(history ? { history } : {}) };
}

/**
 * Hold the run for this process while it resumes it: a second `lllm run --resume` of the same run at the same time
 * would replay it too and go on live beside it (each tool of the live part called twice). A file beside the run log,
 * made exclusively, holding this process's id; one left by a process that is gone is taken over. Released when the
 * process exits.
 */
export function holdRun(runId: string, options: { storeFile: string }): void {
  const folder = path.join(path.dirname(options.storeFile), "runs");
  makePrivateFolder(path.dirname(options.storeFile));
  makePrivateFolder(folder);
  const file = path.join(folder, `${runId}.resuming`);
  for (let tries = 0; tries < 2; tries += 1) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 });
      releaseAtExit(file);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = Number(readFileSync(file, "utf8").trim());
    if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
      throw new ConfigError("resume_running", `--resume: run ${runId} is being resumed already (process ${holder})`, { location: { file: "--resume" }, hint: "Wait for that resume to end, or stop it first." });
    }
    rmSync(file, { force: true }); // left by a resume that was killed
  }
  throw new ConfigError("resume_running", `--resume: run ${runId} is being resumed already`, { location: { file: "--resume" } });
}

/** The holds of this process, released by one `exit` hook (a caller of the CLI's main() may resume many runs). */
const held = new Set<string>();
let hooked = false;

function releaseAtExit(file: string): void {
  held.add(file);
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const hold of held) rmSync(hold, { force: true });
  });
}

/** A run that cannot go on: still running, ended with its answer, stopped by a mistake in its files or flags, or recorded without a journal. */
function checkResumable(record: RunRecord): void {
  const refuse = (why: string, hint: string): never => {
    throw new ConfigError("resume_not_resumable", `--resume: run ${record.id} ${why}`, { location: { file: "--resume" }, hint });
  };
  if (record.status === "running") throw new ConfigError("resume_running", `--resume: run ${record.id} is still running (process ${record.pid ?? "?"})`, { location: { file: "--resume" }, hint: "Wait for it to end, or stop it (Ctrl-C, or kill its process), then resume it." });
  if (record.status === "ok") refuse("ended with its answer: there is nothing left to do", "Run the tactic again for a new answer, or go on with the dialog: lllm run --continue ID --input …");
  if (record.test_file !== null) refuse("is a case of `lllm test`", "Run the test again: lllm test …");
  if (record.batch_id !== null) refuse("is an item of a batch", "Run the same `lllm batch` command again (same --out): it resumes its unfinished items.");
  // A resume that stopped on such a mistake (a key not set in that shell) leaves the run resumable: it was the attempt's.
  if (record.exit_code === 2 && record.attempts.length === 0) refuse(`stopped on a mistake in its files or flags (${record.error_code ?? "exit 2"}), which a resume would meet again`, "Fix it and run the tactic again.");
}

function readResumeInfo(runId: string, value: unknown): ResumeInfo {
  if (value === null || value === undefined) {
    throw new ConfigError("resume_not_resumable", `--resume: run ${runId} was recorded without its journal (by an lllm before durable runs)`, { location: { file: "--resume" }, hint: "Run the tactic again." });
  }
  if (!isPlainObject(value) || !isPlainObject(value["flags"]) || !isPlainObject(value["setup"]) || Object.values(value["setup"]).some((digest) => typeof digest !== "string")) {
    throw damagedRecord(runId, "what it was run with is not readable");
  }
  return value as unknown as ResumeInfo;
}

/**
 * Refuse a tactic that changed since the run (its file, an agent's settings or system prompt, a tool as offered),
 * saying what changed; with `--force`, say it and go on (the journal's answers are then replayed in order).
 */
export function checkSetup(runId: string, recorded: ResumeInfo, now: Record<string, string>, force: boolean): void {
  const changes = setupChanges(recorded.setup, now);
  if (changes.length === 0) return;
  const list = changes.map((change) => `  - ${change}`).join("\n");
  if (force) {
    warn(`--force: resuming run ${runId} with a tactic that changed since:\n${list}`);
    return;
  }
  throw new ConfigError("resume_changed", `--resume: the tactic changed since run ${runId}, so its recorded steps may not fit it any more:\n${list}`, {
    location: { file: "--resume" },
    hint: "Undo the change to resume it, or resume anyway with --force (each agent's recorded answers are then replayed in order), or start a new run.",
  });
}

/**
 * Decide the calls the run stopped during whose tools do not say they are safe to run again: all may with
 * `--rerun-unknown`; on a terminal the user is asked, call by call; otherwise the resume stops with an error naming
 * them. Returns the keys of the calls that may run again.
 */
export async function decideUnfinished(journal: RunJournal, options: { rerunUnknown: boolean; interactive: boolean }): Promise<Set<string>> {
  const unsafe = journal.unfinished.filter((call) => call.note.rerun === undefined);
  const allowed = new Set<string>();
  for (const call of unsafe) {
    if (options.rerunUnknown || (options.interactive && (await askRerun(call.note)))) allowed.add(call.key);
    else throw unknownOutcome(call.note.agent, call.note);
  }
  return allowed;
}

function askRerun(note: ToolStartNote): Promise<boolean> {
  // The model wrote the arguments: control characters are escapes, as in the approval question.
  const shown = escapeJsonControlCharacters(JSON.stringify(note.arguments) ?? "null");
  const text = shown.length > 400 ? `${shown.slice(0, 399)}…` : shown;
  // In its turn among the terminal's questions, with what was typed before it dropped.
  return inTurn(async () => {
    await discardTypedAhead(process.stdin);
    return askRerunNow(note, text);
  });
}

function askRerunNow(note: ToolStartNote, text: string): Promise<boolean> {
  return new Promise((resolve) => {
    const reader = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
    let settled = false;
    const finish = (yes: boolean): void => {
      if (settled) return;
      settled = true;
      reader.close();
      resolve(yes);
    };
    reader.question(`lllm: the run stopped during a call of ${escapeControlCharacters(note.name, { all: true })}(${text}) (agent \`${escapeControlCharacters(note.agent, { all: true })}\`), whose outcome was never recorded: it may have done its work, or part of it. Run it again? [y/N] `, (line) => {
      const word = line.trim().toLowerCase();
      finish(word === "y" || word === "yes");
    });
    reader.once("close", () => finish(false));
  });
}

/** The flags a resume runs with: the run's own, with the limits, timeout and step cap given now over them. */
export function resumeFlags(recorded: ResumeFlags, given: { limits: ResumeFlags["limits"]; modelTimeout?: number | undefined; maxSteps?: number | undefined }): ResumeFlags {
  const limits = { ...recorded.limits, ...given.limits };
  return {
    ...recorded,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(given.modelTimeout !== undefined ? { modelTimeout: given.modelTimeout } : {}),
    ...(given.maxSteps !== undefined ? { maxSteps: given.maxSteps } : {}),
  };
}
