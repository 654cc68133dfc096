import type { AgentEvent } from "../agent/index.js";
import { BudgetError, InterruptedError, isLllmError } from "../errors.js";
import type { ModelMessage } from "../providers/Model.js";
import { newRunId } from "../util/newRunId.js";
import type { SecretRedactor } from "../util/redact.js";
import type { ModelCallRecord, StoredMessage, ToolCallStoredRecord } from "./RunRecord.js";
import type { FunctionCall } from "../tools/index.js";
import { blockText } from "../tools/ContentBlock.js";
import { formattedBody } from "../tools/formatResult.js";
import type { EndedCall, ToolOutcome } from "./journal/ToolJournal.js";
import { RunSpool } from "./RunSpool.js";
import type { RunStart, SpoolEntry, ToolStart } from "./SpoolEntry.js";
import { encodeOutput } from "./storedRows.js";
import { combineSpend, noSpend, type RunSpend, type RunTally } from "./RunTally.js";

export interface RunRecorderOptions {
  /** The store's file, `$LLLM_HOME/logs.db` (the run goes to the spool beside it, `logs.spool/`). */
  file: string;
  run: Omit<RunStart, "id" | "startedAt" | "cwd">;
  redactor: SecretRedactor;
  /** The run's tally (tokens, cost), fed by the caller from the same events. */
  tally: RunTally;
  /** Told once (per process) when the store cannot be written; the run goes on. */
  warn: (message: string) => void;
  /**
   * The id to record under, when a run is run again from its start under the id of its first attempt (a batch item
   * waiting for a provider batch job): the same lines are written again and merged once. Default: a new id.
   */
  id?: string;
  /**
   * The run can be resumed (`lllm run`, a batch item): each model answer and tool call is on disk before the run acts
   * on it, its journal. Otherwise (a chat turn, a test case, a served request) they follow within `FLUSH_DELAY_MS`.
   */
  journaled?: boolean;
  /**
   * A later attempt of a recorded run (`lllm run --resume`): recorded under the run's id (`id`), as its attempt
   * `attempt`, its calls numbered on from `from`; the steps it replays (`replayed`) are in the record already.
   */
  resume?: { attempt: number; from: { modelSeq: number; toolSeq: number; step: number }; replayed: ReplayedSteps; earlierMs: number; earlier: RunSpend; askedAgain?: number };
}

/** Tells the answers and tool outcomes a resumed run took from its journal (they are recorded already). */
export interface ReplayedSteps {
  /** A `model_reply` event's usage object is that of a replayed answer. */
  reply(usage: object): boolean;
  /** A `tool_call` event's call was answered from the journal. */
  call(call: object): boolean;
}

interface PendingCall {
  step: number;
  agent: string;
  round: number;
  model: string | null;
  startedAt: number;
  /**
   * What was sent (a copy): only the messages after those it shares with the agent's previous recorded call are
   * stored (converted when the answer comes, if it is recorded).
   */
  sent: ModelMessage[];
  tools: string[];
  retries: ModelCallRecord["retries"];
}

/**
 * Records one run as its events arrive into the process's spool (`RunSpool`: lines in a file, no database), from
 * which readers merge it into `logs.db`: the run when it starts and its outcome at once (a run that finished is on
 * disk when `finish` returns, so a batch's result line never names a run the log could lose), each model call when
 * the reply arrives and each tool call when it ends with the next of those writes (at most a moment later: a SIGKILL
 * loses at most those). Every text is redacted of known secrets before it is written. Recording never fails a run:
 * when the spool cannot be written, the user is told once and the run goes on unrecorded.
 */
export class RunRecorder {
  readonly id: string;
  readonly #options: RunRecorderOptions;
  readonly #spool: RunSpool;
  #failed = false;
  /**
   * The model calls waiting for their answers, by the array the loop sent (which the reply names: two copies of one
   * agent may ask at once), or by agent for a reply that does not name it.
   */
  readonly #pending = new Map<object | string, PendingCall>();
  /**
   * Per agent, what its previously recorded model call was sent, to store only what is new: the record's order (a
   * reader rebuilds each call's messages from the agent's call before it in the record), which is the order of the
   * answers, not of the calls, when two copies of the agent ask at once.
   */
  readonly #lastRecorded = new Map<string, ModelMessage[]>();
  /**
   * Agents of a resumed attempt whose next recorded call stores its whole dialog: the calls before it were replayed,
   * not recorded again, so the record has no row of this attempt for its messages to follow.
   */
  readonly #wholeNext = new Set<string>();
  /** Calls recorded with their journal outcome (`toolEnded`): their `tool_call` events add nothing. */
  readonly #recordedCalls = new WeakSet<object>();
  /** Arguments objects and their redacted copies (`#redactedArguments`). */
  readonly #argumentsSeen = new WeakMap<object, Record<string, unknown>>();
  /**
   * The arguments texts of the tool calls the last answers asked for, redacted (`#redactedCallArguments`): the same text
   * is in the answer's record and again in the next call's dialog. Kept by call id, once, while the redactor knows the
   * same secrets (`size`).
   */
  readonly #callArguments = new Map<string, { text: string; redacted: string; size: number }>();
  /**
   * The result texts of the tool rows written, by call id, until a model call's messages hold them: there the message
   * refers to the row (`StoredMessage.resultOf`) instead of holding the text again.
   */
  readonly #rowTexts = new Map<string, { seq: number; text: string; losses: number }>();
  /**
   * Whether this recorder numbers the rows it refers to: not when it records a run again from its start under the id
   * of an earlier attempt (a batch item after its provider batch job), whose rows came first and keep their numbers,
   * which calls ending in another order would not match.
   */
  readonly #ownRows: boolean;
  #modelSeq = 0;
  #toolSeq = 0;
  #step = 0;
  /** What the answers a resumed attempt replayed had cost (they are counted in the tally, and in `earlier`). */
  #replayedSpend: RunSpend = noSpend();
  readonly #started = Date.now();

  private constructor(options: RunRecorderOptions) {
    this.#options = options;
    this.id = options.id ?? newRunId(this.#started);
    this.#spool = RunSpool.of(options.file);
    this.#ownRows = options.id === undefined || options.resume !== undefined;
    if (options.resume) ({ modelSeq: this.#modelSeq, toolSeq: this.#toolSeq, step: this.#step } = options.resume.from);
  }

  /**
   * Record the run's start (it lists as running a moment later, with the next line written at once or the spool's
   * next flush); a recorder whose spool failed is `failed`.
   */
  static begin(options: RunRecorderOptions): RunRecorder {
    const recorder = new RunRecorder(options);
    const { redactor, run } = options;
    if (options.resume) {
      // The run is in the store already: it is running again (at once: a reader must not see it crashed meanwhile).
      recorder.#append({ resume: { run: recorder.id, attempt: options.resume.attempt, startedAt: recorder.#started, from: options.resume.from, earlierMs: Math.round(options.resume.earlierMs), ...(options.resume.askedAgain !== undefined ? { askedAgain: options.resume.askedAgain } : {}) } }, { now: true, consequence: "this attempt is not logged" });
      return recorder;
    }
    recorder.#append(
      {
        begin: {
          id: recorder.id,
          startedAt: recorder.#started,
          tacticPath: run.tacticPath,
          tacticName: run.tacticName,
          configDigest: run.configDigest,
          input: redactor.redact(run.input),
          vars: Object.fromEntries(Object.entries(run.vars).map(([key, value]) => [key, redactor.redact(value)])),
          models: run.models,
          lllmVersion: run.lllmVersion,
          ...(run.parentRun !== undefined ? { parentRun: run.parentRun } : {}),
          ...(run.continuesRun !== undefined ? { continuesRun: run.continuesRun } : {}),
          ...(run.batchId !== undefined ? { batchId: run.batchId } : {}),
          ...(run.test !== undefined ? { test: run.test } : {}),
          ...(run.served !== undefined ? { served: run.served } : {}),
          ...(run.resume !== undefined ? { resume: run.resume } : {}),
          ...(run.batchItem !== undefined ? { batchItem: run.batchItem } : {}),
          cwd: process.cwd(),
        },
      },
      { now: false, consequence: "this run is not logged" },
    );
    return recorder;
  }

  /** The store could not be written: nothing more is recorded (the one warning is given). */
  get failed(): boolean {
    return this.#failed;
  }

  /**
   * A model call failed and will be tried again: kept with the call in flight (the one for that model; retries
   * happen between its model_call and model_reply events), and stored with its answer.
   */
  onRetry(notice: { model: string; attempt: number; cause: string; waitMs: number }): void {
    const inFlight = [...this.#pending.values()];
    const call = inFlight.findLast((pending) => pending.model === notice.model) ?? inFlight.at(-1);
    call?.retries.push({ attempt: notice.attempt, cause: this.#options.redactor.redact(notice.cause), wait_ms: Math.round(notice.waitMs) });
  }

  onEvent(event: AgentEvent): void {
    if (this.#failed) return;
    const redact = (text: string): string => this.#options.redactor.redact(text);
    const replayed = this.#options.resume?.replayed;
    if (replayed) {
      // What a resumed attempt replays is in the record already, its calls under their first numbers. Its agents'
      // first live calls store their whole dialog (the replayed ones were not kept as the last sent).
      if (event.type === "model_reply" && replayed.reply(event.usage)) {
        this.#takePending(event);
        this.#wholeNext.add(event.agent);
        const cost = this.#options.tally.add(event);
        this.#replayedSpend = combineSpend(this.#replayedSpend, { llmCalls: 1, usage: { promptTokens: event.usage.promptTokens, cachedPromptTokens: event.usage.cachedPromptTokens ?? 0, completionTokens: event.usage.completionTokens, reasoningTokens: event.usage.reasoningTokens ?? 0 }, cost });
        return;
      }
      // An agent whose last answer was replayed (it is in `#wholeNext` until its first live one): that answer's calls
      // are in the record already, those the journal does not answer too (refused, repeated, with arguments that are
      // not JSON), which run again without it and must not be recorded twice.
      if (event.type === "tool_call" && (replayed.call(event.call) || this.#wholeNext.has(event.agent))) return;
    }
    if (event.type === "model_call") {
      this.#pending.set(event.sent ?? event.agent, {
        step: this.#step++,
        agent: event.agent,
        round: event.round,
        model: event.model ?? null,
        startedAt: Date.now(),
        sent: (event.sent ?? []).slice(),
        tools: event.tools,
        retries: [],
      });
    } else if (event.type === "model_reply") {
      const pending = this.#takePending(event);
      const sent = pending?.sent ?? [];
      const kept = this.#wholeNext.delete(event.agent) ? 0 : commonStart(this.#lastRecorded.get(event.agent) ?? [], sent);
      this.#lastRecorded.set(event.agent, sent);
      const cost = this.#options.tally.add(event);
      const record: ModelCallRecord = {
        seq: this.#modelSeq++,
        step: pending?.step ?? this.#step++,
        agent: event.agent,
        round: event.round,
        model: event.model ?? pending?.model ?? null,
        started_at: pending?.startedAt ?? Date.now(),
        latency_ms: event.latencyMs === undefined ? null : Math.round(event.latencyMs),
        messages: sent.slice(kept).map((message) => this.#storedMessage(message, redact)),
        tools: pending?.tools ?? [],
        reply: redact(event.text),
        tool_calls: event.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: this.#redactedCallArguments(call, true) })),
        finish_reason: event.finishReason ?? null,
        prompt_tokens: event.usage.promptTokens,
        cached_prompt_tokens: event.usage.cachedPromptTokens ?? 0,
        completion_tokens: event.usage.completionTokens,
        reasoning_tokens: event.usage.reasoningTokens ?? 0,
        cost,
        retries: pending?.retries ?? [],
      };
      if (event.usage.cacheWritePromptTokens) record.cache_write_prompt_tokens = event.usage.cacheWritePromptTokens;
      if (event.usage.batch) record.batch = true;
      if (event.carry) record.carry = this.#options.redactor.redactValue(event.carry);
      // On disk before the run acts on it (a resume replays it instead of asking again): at once when it asks for
      // no tool; else with the first of its calls, whose start or record is written at once, in the same write.
      this.#append({ calls: { run: this.id, model: [{ record, messagesKept: kept }], tool: [] } }, { now: this.#options.journaled === true && event.toolCalls.length === 0 });
    } else if (event.type === "tool_call") {
      // A journaled call was recorded with its outcome.
      if (this.#recordedCalls.has(event.call)) return;
      const record = this.#toolRow(event.agent, event.call, event.durationMs, { ...(event.repeated ? { repeated: true } : {}), ...(event.refused ? { refused: true } : {}) });
      this.#append({ calls: { run: this.id, model: [], tool: [record] } }, { now: this.#options.journaled === true });
    }
  }

  /** The call a reply answers, taken from those waiting: by the array it names, else the agent's (its last, if several). */
  #takePending(reply: { agent: string; sent?: ModelMessage[] | undefined }): PendingCall | undefined {
    let key: object | string | undefined = reply.sent !== undefined && this.#pending.has(reply.sent) ? reply.sent : reply.agent;
    if (!this.#pending.has(key)) key = [...this.#pending.keys()].findLast((candidate) => this.#pending.get(candidate)!.agent === reply.agent);
    if (key === undefined) return undefined;
    const pending = this.#pending.get(key);
    this.#pending.delete(key);
    return pending;
  }

  /**
   * A tool call is about to run (the journal): on disk before it runs, so that a resume finds a call that never ended
   * and does not run it again unless it is safe (`rerun`).
   */
  toolStarted(start: Omit<ToolStart, "run" | "at">): void {
    const line: ToolStart = { key: start.key, agent: start.agent, name: start.name, arguments: this.#redactedArguments(start.arguments), run: this.id, at: Date.now() };
    if (start.rerun !== undefined) line.rerun = start.rerun;
    this.#append({ start: line }, { now: true });
  }

  /**
   * A journaled tool call ended: its outcome (`ToolJournal`'s JSON) on disk before the run goes on, in one line with
   * the call's record (`ended`; its `tool_call` event then adds nothing). A program's calls (bridged, ids
   * `program_…`) are kept in the journal only: the run's report lists them with their program.
   */
  toolEnded(key: string, outcome: ToolOutcome, ended?: EndedCall): void {
    if (this.#failed) return;
    const row = ended && !ended.call.id.startsWith("program_") ? this.#toolRow(ended.agent, ended.call, ended.durationMs, {}) : undefined;
    if (ended && row) this.#recordedCalls.add(ended.call);
    // The result text once: the row holds it, and the merge puts it back into the outcome (`resultInRow`), with a
    // string result when it is that text's body (`resultIsBody`, checked here as the merge will read it).
    const inRow = row?.result != null && outcome.resultStr !== undefined && outcome.resultStr === ended?.call.resultStr;
    const { resultStr: _resultStr, ...rest } = outcome;
    // A row text that redaction left as it was holds no secret, nor does its body: the result then compares as it is.
    const clean = row?.result === ended?.call.resultStr;
    const isBody = inRow && typeof rest.result === "string" && formattedBody(row.result!) === (clean ? rest.result : this.#options.redactor.redact(rest.result));
    if (isBody) delete rest.result;
    const kept = inRow ? rest : outcome;
    const line: Extract<SpoolEntry, { outcome: unknown }>["outcome"] = { run: this.id, key, outcome: this.#options.redactor.redact(JSON.stringify(kept)), at: Date.now() };
    if (row) line.row = row;
    if (inRow) line.resultInRow = true;
    if (isBody) line.resultIsBody = true;
    this.#append({ outcome: line }, { now: true });
  }

  #toolRow(agent: string, call: FunctionCall, durationMs: number, flags: { repeated?: boolean; refused?: boolean }): ToolCallStoredRecord {
    const redact = (text: string): string => this.#options.redactor.redact(text);
    const seq = this.#toolSeq++;
    if (call.resultStr !== undefined && this.#ownRows) this.#rowTexts.set(call.id, { seq, text: call.resultStr, losses: this.#spool.losses });
    return {
      seq,
      step: this.#step++,
      agent,
      call_id: call.id,
      name: call.name,
      arguments: this.#redactedArguments(call.arguments ?? {}),
      result: call.resultStr === undefined ? null : redact(call.resultStr),
      status: flags.refused ? "refused" : call.error !== undefined ? "error" : flags.repeated ? "repeated" : "ok",
      error: call.error === undefined ? null : redact(call.error),
      duration_ms: Math.round(durationMs),
      ended_at: Date.now(),
    };
  }

  /** A message as stored: a tool result whose row was written already refers to it, its text is not written again. */
  #storedMessage(message: ModelMessage, redact: (text: string) => string): StoredMessage {
    if (message.role === "tool") {
      const row = this.#rowTexts.get(message.toolCallId);
      // Only a row that reached the spool: a write that failed since lost it (the text is then written here).
      if (row !== undefined && row.text === message.content && row.losses === this.#spool.losses) {
        // Once: a later call's messages that hold it again (scratch that came back) hold the text.
        this.#rowTexts.delete(message.toolCallId);
        return { role: "tool", content: null, toolCallId: message.toolCallId, ...(message.name !== undefined ? { name: message.name } : {}), resultOf: row.seq };
      }
    }
    return toStoredMessage(message, redact, (call) => this.#redactedCallArguments(call, false));
  }

  /**
   * A tool call's arguments text, redacted: an answer's calls (`keep`) are remembered until the next call's dialog
   * holds them, where the text is not scanned again.
   */
  #redactedCallArguments(call: { id: string; arguments: string }, keep: boolean): string {
    const { redactor } = this.#options;
    const kept = this.#callArguments.get(call.id);
    if (kept !== undefined) this.#callArguments.delete(call.id);
    if (kept !== undefined && kept.text === call.arguments && kept.size === redactor.size) return kept.redacted;
    const redacted = redactor.redact(call.arguments);
    // A few only: an agent whose next call never comes (an answer, a failure) leaves its calls here.
    if (keep && this.#callArguments.size < 64) this.#callArguments.set(call.id, { text: call.arguments, redacted, size: redactor.size });
    return redacted;
  }

  /**
   * A call's arguments with secrets removed, in any string of them, keys included (as JSON text, where a secret may be
   * escaped). Made once per arguments object: a journaled call's start and its record both hold them.
   */
  #redactedArguments(value: Record<string, unknown>): Record<string, unknown> {
    let redacted = this.#argumentsSeen.get(value);
    if (redacted === undefined) {
      // Written as JSON at once (the start line), and again when the call ends (its row): a copy only when a secret
      // was in it. The call's arguments are the model's, which no one changes (a tool gets a copy of its own).
      const text = JSON.stringify(value);
      const clean = this.#options.redactor.redact(text);
      this.#argumentsSeen.set(value, (redacted = clean === text ? value : (JSON.parse(clean) as Record<string, unknown>)));
    }
    return redacted;
  }

  /** Whether the run keeps a journal (see `RunRecorderOptions.journaled`). */
  get journaled(): boolean {
    return this.#options.journaled === true;
  }

  /**
   * What the run spent so far, every attempt's: a resumed attempt's tally counts what it replayed, which may be less
   * than what the earlier attempts spent (it stopped before replaying all, or a changed tactic under `--force` asked
   * fewer): the earlier attempts' calls as recorded, and this attempt's live ones.
   */
  spent(): RunSpend {
    const { tally, resume } = this.#options;
    return resume ? combineSpend(resume.earlier, combineSpend(tally.spend, this.#replayedSpend, -1)) : tally.spend;
  }

  /** Record how the run ended: its answer, or the error that stopped it. */
  finish(outcome: { output?: unknown; error?: unknown; exitCode?: number; details?: Record<string, unknown> }): void {
    if (this.#failed) return;
    const { tally, redactor } = this.#options;
    const error = outcome.error;
    const exitCode = outcome.exitCode ?? (error === undefined ? 0 : isLllmError(error) ? error.exitCode : 1);
    const endedAt = Date.now();
    const output = encodeOutput(outcome.output);
    const spent = this.spent();
    this.#append({
      finish: {
        run: this.id,
        end: {
          endedAt,
          status: runStatusOf(error),
          exitCode,
          errorCode: error === undefined ? null : isLllmError(error) ? error.code : "internal_error",
          errorMessage: error === undefined ? null : redactor.redact(describe(error)),
          output: output === null ? null : redactor.redact(output),
          details: outcome.details && Object.keys(outcome.details).length > 0 ? redactor.redact(JSON.stringify(outcome.details)) : null,
          models: [...new Set([...this.#options.run.models, ...tally.models])],
          llmCalls: spent.llmCalls,
          cost: spent.cost,
          // A resumed run's duration is that of its attempts together (not the time between them).
          durationMs: endedAt - this.#started + (this.#options.resume?.earlierMs ?? 0),
          ...spent.usage,
        },
      },
    }, { now: true });
  }

  /** `now`: on disk before this returns (the run's start and end); else with the next such line, or shortly. */
  #append(entry: SpoolEntry, options: { now: boolean; consequence?: string }): void {
    if (this.#failed) return;
    const consequence = options.consequence ?? "the rest of this run is not logged";
    try {
      this.#spool.append(entry, { now: options.now });
    } catch (error) {
      this.#failed = true;
      this.#spool.warnOnce(this.#options.warn, `the run log ${this.#options.file} cannot be written (${this.#spool.folder}), ${consequence}: ${describe(error)}`);
    }
  }
}

/** How many messages two sends start with in common (the dialog grows; retries' scratch comes and goes). */
function commonStart(before: readonly ModelMessage[], now: readonly ModelMessage[]): number {
  const length = Math.min(before.length, now.length);
  let index = identicalStart(before, now, length);
  while (index < length && sameMessage(before[index]!, now[index]!)) index += 1;
  return index;
}

/**
 * How many messages two sends start with that are the same objects (the dialog sends its unchanged messages as the
 * same objects): a loop over the whole dialog at every round, which V8 optimises on a long run, small to compile
 * alone; `sameMessage` (JSON, field by field) runs only from where they differ.
 */
function identicalStart(before: readonly ModelMessage[], now: readonly ModelMessage[], length: number): number {
  let index = 0;
  while (index < length && before[index] === now[index]) index += 1;
  return index;
}

function sameMessage(a: ModelMessage, b: ModelMessage): boolean {
  if (a === b) return true;
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === "tool" && b.role === "tool") return a.toolCallId === b.toolCallId && a.name === b.name;
  if (a.role === "assistant" && b.role === "assistant") return a.toolCalls === b.toolCalls || JSON.stringify(a.toolCalls ?? null) === JSON.stringify(b.toolCalls ?? null);
  return true;
}

function toStoredMessage(message: ModelMessage, redact: (text: string) => string, redactArguments: (call: { id: string; arguments: string }) => string): StoredMessage {
  const stored: StoredMessage = { role: message.role, content: message.content === null ? null : redact(message.content) };
  if (message.role === "assistant" && message.toolCalls) stored.toolCalls = message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: redactArguments(call) }));
  if (message.role === "tool") {
    stored.toolCallId = message.toolCallId;
    if (message.name !== undefined) stored.name = message.name;
  }
  // A tool's media are noted in its content already; a user's are noted beside it, as a tool result notes them.
  if (message.role === "user" && message.media && message.media.length > 0) stored.media = message.media.map(blockText);
  return stored;
}

/** How a run that ended with this error (or none) is filed. */
export function runStatusOf(error: unknown): "ok" | "interrupted" | "budget" | "error" {
  return error === undefined ? "ok" : error instanceof InterruptedError ? "interrupted" : error instanceof BudgetError ? "budget" : "error";
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
