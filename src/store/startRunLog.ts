import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { AgentEvent } from "../agent/index.js";
import type { RetryNotice } from "../providers/requestWithRetries.js";
import { lllmHome } from "../registry/index.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { canonicalJson } from "../util/canonicalJson.js";
import { PriceTable } from "../providers/PriceTable.js";
import { proxyKeyVariables } from "./proxyKeyVariables.js";
import { environmentSecrets, redactorOf, type SecretRedactor } from "../util/redact.js";
import { describe, RunRecorder, runStatusOf, type ReplayedSteps } from "./RunRecorder.js";
import type { RunJournal } from "./journal/RunJournal.js";
import { runSetup } from "./journal/runSetup.js";
import type { ResumeFlags } from "./SpoolEntry.js";
import { RunTally } from "./RunTally.js";
import type { ServedRunInfo } from "./RunRecord.js";

export interface StartRunLogOptions {
  prepared: PreparedTactic;
  input: string;
  vars: Record<string, string>;
  /** `false` with `--no-log`. */
  log?: boolean;
  /** The run this one continues (`--continue`). */
  continuesRun?: string;
  /** The batch this run is an item of (`lllm batch`). */
  batchId?: string;
  /** The test case this run is (`lllm test`). */
  test?: { file: string; case: string };
  /** How `lllm serve` was asked for this run. */
  served?: ServedRunInfo;
  /** Record under this id (the record of an earlier attempt of the same run: see `RunRecorderOptions.id`). */
  recordId?: string;
  /**
   * The flags of `lllm run` that shaped this run, kept so that its resume runs it the same way; given (`{}` at least),
   * the run can be resumed (`lllm run --resume`), as a batch item's (`batchItem`) can.
   */
  flags?: ResumeFlags;
  /** The batch item this run is (see `batchItemKey`). */
  batchItem?: string;
  /**
   * A later attempt of a recorded run (`lllm run --resume`): recorded under its id, the steps it replays from the
   * journal left out (they are recorded already).
   */
  resume?: { journal: RunJournal; replayed: ReplayedSteps };
  env?: NodeJS.ProcessEnv;
  /**
   * The environment's credentials (`environmentSecrets(env)`) as a server read them once, when it started, for all its
   * runs: listing the environment cost about 15 to 50 µs, a few percent of a served request. Read at each run when
   * not given.
   */
  environmentSecrets?: readonly string[];
  warn: (message: string) => void;
}

/** The run's tally (always) and its recorder (when logging is on and the store could be opened). */
export interface RunLog {
  tally: RunTally;
  recorder?: RunRecorder;
  /** Feed one event to the tally and the recorder. */
  onEvent: (event: AgentEvent) => void;
  /** A model call failed and is retried (recorded with the call's answer). */
  onRetry: (notice: RetryNotice) => void;
  /** Record the outcome, and send the trace when OpenTelemetry export is on. */
  finish: (outcome: { output?: unknown; error?: unknown; details?: Record<string, unknown> }) => Promise<void>;
}

/**
 * Start logging one `lllm run`: logging is on unless `--no-log`, `LLLM_LOG=0`, or `log: false` in the project
 * settings. Recording appends to the store's spool (`RunRecorder`); it never loads libsql.
 */
export async function startRunLog(options: StartRunLogOptions): Promise<RunLog> {
  const env = options.env ?? process.env;
  const { prepared } = options;
  // The settings' own object (or none): the table is built once per process for it, not for every run of a batch.
  const tally = new RunTally(PriceTable.load(prepared.settings.prices));
  const enabled = options.log !== false && env.LLLM_LOG !== "0" && env.LLLM_LOG !== "false" && prepared.settings.log !== false;
  let recorder: RunRecorder | undefined;
  let redactor: SecretRedactor | undefined;
  // The process-wide redactor knows the keys lllm used; the store also knows the keys the tactic's proxies name.
  const secrets = (): SecretRedactor => (redactor ??= runRedactor(prepared, env, options.batchId, options.environmentSecrets));
  const memo = tacticMemo(prepared);
  const tacticName = (memo.name ??= prepared.tactic.config.name ?? path.basename(prepared.tactic.file).replace(/\.(ya?ml|json)$/, ""));
  if (enabled) {
    const { resume } = options;
    // A run of `lllm run` or a batch item can be resumed: it keeps a journal (a test case is run again by its test
    // file, a turn of `lllm chat` goes on with `lllm chat --continue`, a served request is sent again by its client).
    const resumable = (options.flags !== undefined || options.batchItem !== undefined) && options.test === undefined;
    recorder = RunRecorder.begin({
      journaled: resumable || resume !== undefined,
      ...(options.recordId !== undefined ? { id: options.recordId } : {}),
      ...(resume ? { id: resume.journal.runId, resume: { attempt: resume.journal.attempt, from: resume.journal.from, replayed: resume.replayed, earlierMs: resume.journal.earlierMs, earlier: resume.journal.earlierSpend, ...(resume.journal.askedAgain ? { askedAgain: resume.journal.askedAgain.seq } : {}) } } : {}),
      file: storeFile(env, prepared.settings.home),
      tally,
      redactor: secrets(),
      warn: options.warn,
      run: {
        tacticPath: prepared.tactic.file,
        tacticName,
        configDigest: configDigest(prepared),
        input: options.input,
        vars: options.vars,
        models: (memo.models ??= [...new Set(prepared.agents.map((agent) => agent.config.model_name).filter((name): name is string => typeof name === "string"))]),
        lllmVersion: lllmVersion(),
        ...(options.continuesRun !== undefined ? { continuesRun: options.continuesRun } : {}),
        ...(options.batchId !== undefined ? { batchId: options.batchId } : {}),
        ...(options.test !== undefined ? { test: options.test } : {}),
        ...(options.served !== undefined ? { served: options.served } : {}),
        ...(options.batchItem !== undefined ? { batchItem: options.batchItem } : {}),
        ...(resumable && !resume ? { resume: { flags: options.flags ?? {}, setup: (memo.setup ??= runSetup(prepared)) } } : {}),
      },
    });
  }
  // OpenTelemetry only when an endpoint is set: its packages are loaded then and only then.
  const tracing = (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
  const tracer = tracing
    ? new (await import("../telemetry/RunTracer.js")).RunTracer({
        tacticName,
        lllmVersion: lllmVersion(),
        captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true",
        redact: (text) => secrets().redact(text),
      })
    : undefined;
  return {
    tally,
    // Read at the end of the run: a store that turned out to be unusable has no run to name.
    get recorder() {
      return recorder && !recorder.failed ? recorder : undefined;
    },
    onEvent: (event) => {
      // The recorder feeds the tally itself (it needs each call's cost); without one, the tally is fed here.
      if (recorder && !recorder.failed) recorder.onEvent(event);
      else if (event.type === "model_reply") tally.add(event);
      tracer?.onEvent(event);
    },
    onRetry: (notice) => recorder?.onRetry(notice),
    finish: async (outcome) => {
      recorder?.finish(outcome);
      await tracer?.finish({ status: runStatusOf(outcome.error), ...(outcome.error !== undefined ? { errorMessage: describe(outcome.error) } : {}) });
    },
  };
}

/**
 * What each prepared tactic's runs share: a batch starts thousands of runs of one tactic, and reading the proxies'
 * files or hashing the configuration for each cost more than the run's own bookkeeping.
 */
const ofTactic = new WeakMap<PreparedTactic, TacticMemo>();

interface TacticMemo {
  keyVariables?: Set<string>;
  digest?: string;
  /** The digests of the tactic's parts (see `runSetup`). */
  setup?: Record<string, string>;
  name?: string;
  models?: string[];
  /** The environment's credentials as the first item of a batch read them, and the redactor of the batch's runs. */
  batch?: { id: string; env: NodeJS.ProcessEnv; values: string[]; redactor?: SecretRedactor };
}

function tacticMemo(prepared: PreparedTactic): TacticMemo {
  let memo = ofTactic.get(prepared);
  if (!memo) ofTactic.set(prepared, (memo = {}));
  return memo;
}

/**
 * The values of the environment's credential-like variables: those a server read when it started (`given`), or read
 * at each run, except within a batch: there the first item reads them for all (listing the environment cost more
 * than the rest of an item's record), as the batch already reads its keys once, when it starts.
 */
function environmentValues(prepared: PreparedTactic, env: NodeJS.ProcessEnv, batchId: string | undefined, given: readonly string[] | undefined): readonly string[] {
  if (given !== undefined) return given;
  if (batchId === undefined) return environmentSecrets(env);
  const memo = tacticMemo(prepared);
  if (memo.batch?.id !== batchId || memo.batch.env !== env) memo.batch = { id: batchId, env, values: environmentSecrets(env) };
  return memo.batch.values;
}

/**
 * What a run's record is redacted of: the environment's credentials and the values of the tactic's key variables.
 * Within a batch the first item's redactor serves every item (the same environment, the same tactic).
 */
function runRedactor(prepared: PreparedTactic, env: NodeJS.ProcessEnv, batchId: string | undefined, given: readonly string[] | undefined): SecretRedactor {
  const values = environmentValues(prepared, env, batchId, given);
  const make = (): SecretRedactor => storeRedactor([...values, ...[...keyVariables(prepared)].map((name) => env[name])]);
  if (batchId === undefined) return make();
  // environmentValues has just kept this batch's values in the memo: its redactor goes beside them.
  const batch = tacticMemo(prepared).batch!;
  return (batch.redactor ??= make());
}

/**
 * Variables that hold keys whatever their names: the agents' `invoker_config.api_key_env` and the proxies'
 * `api_key_env`. The names, not the values: these are read from the environment at each run.
 */
function keyVariables(prepared: PreparedTactic): Set<string> {
  const memo = tacticMemo(prepared);
  if (memo.keyVariables) return memo.keyVariables;
  const names = proxyKeyVariables(prepared.registry);
  for (const agent of prepared.agents) {
    const name = agent.config.invoker_config?.api_key_env;
    if (typeof name === "string") names.add(name);
  }
  return (memo.keyVariables = names);
}

/** The last redactor made, by its secrets: runs that know the same secrets share it (and its compiled pattern). */
let lastRedactor: { key: string; redactor: SecretRedactor } | undefined;

function storeRedactor(values: Array<string | undefined>): SecretRedactor {
  const key = JSON.stringify(values);
  if (lastRedactor?.key !== key) lastRedactor = { key, redactor: redactorOf(values) };
  return lastRedactor.redactor;
}

/**
 * The hint for a command that needs a logged run (`--continue`, `--resume`, `logs show`) when the log has none yet:
 * a newcomer trying these first needs to hear that a run makes one.
 */
export const NO_RUNS_YET = "Every `lllm run`, `chat` and `test` is recorded there as it runs (unless --no-log, `log: false` or LLLM_LOG=0): run one first, e.g. lllm run TACTIC --input …";

/** `$LLLM_HOME/logs.db` (the project settings' `home:` first). */
export function storeFile(env: NodeJS.ProcessEnv = process.env, home?: string): string {
  return path.join(home ?? lllmHome(env), "logs.db");
}

/** A digest of the resolved configuration: two runs with the same digest ran the same tactic setup. */
export function configDigest(prepared: PreparedTactic): string {
  const memo = tacticMemo(prepared);
  return (memo.digest ??= computeConfigDigest(prepared));
}

function computeConfigDigest(prepared: PreparedTactic): string {
  const resolved = { tactic: prepared.tactic.config, agents: prepared.agents.map((agent) => ({ name: agent.name, config: agent.config, system: agent.systemPrompt.text })) };
  return createHash("sha256").update(canonicalJson(resolved)).digest("hex").slice(0, 16);
}

let version: string | undefined;

/** lllm's version, read once per process. */
export function lllmVersion(): string {
  if (version !== undefined) return version;
  try {
    version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    version = "unknown";
  }
  return version;
}
