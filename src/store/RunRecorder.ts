import diagnostics_channel from "node:diagnostics_channel";
import type { AgentEvent } from "../agent/index.js";
import { BudgetError, InterruptedError, isLllmError } from "../errors.js";
import type { ModelMessage } from "../providers/Model.js";
import { newRunId } from "../util/newRunId.js";
import { REQUEST_SENT_CHANNEL } from "../util/requestSentChannel.js";
import type { SecretRedactor } from "../util/redact.js";
import type { ModelCallRecord, StoredMessage } from "./RunRecord.js";
import { encodeOutput, RunStore, type RunCalls, type RunStart } from "./RunStore.js";
import type { RunTally } from "./RunTally.js";

export interface RunRecorderOptions {
  /** The store's file, `$LLLM_HOME/logs.db`. */
  file: string;
  run: Omit<RunStart, "id" | "startedAt">;
  redactor: SecretRedactor;
  /** The run's tally (tokens, cost), fed by the caller from the same events. */
  tally: RunTally;
  /** Told once when the store cannot be written; the run goes on. */
  warn: (message: string) => void;
}

interface PendingCall {
  step: number;
  agent: string;
  round: number;
  model: string | null;
  startedAt: number;
  /** How many messages of the agent's previous call this one starts with. */
  messagesKept: number;
  /** The messages after those. */
  messages: StoredMessage[];
  tools: string[];
  retries: ModelCallRecord["retries"];
}

/**
 * Rows are written in one transaction at most this long after the first of them is queued (and always when the
 * run ends or the process exits): a commit per row would cost more than a fast tool round. A SIGKILL can lose
 * the calls of this last moment; the run itself is written at once, so it still reads as crashed.
 */
const FLUSH_DELAY_MS = 200;

/**
 * Published when a request is on the wire: by Node's fetch (undici) when its headers are written, and by the model
 * clients' own transport (`nodeHttpFetch`) when the request is written.
 */
const REQUEST_SENT = ["undici:client:sendHeaders", REQUEST_SENT_CHANNEL];

/**
 * Writes one run into the store as its events arrive: the run when it starts, each model call when the reply
 * arrives, each tool call when it ends, and the outcome. Every text is redacted of known secrets before it is
 * written. Logging never fails a run: the first error is reported once through `warn` and recording stops.
 */
export class RunRecorder {
  readonly id: string;
  readonly #options: RunRecorderOptions;
  #store: RunStore | undefined;
  #opened = false;
  #failed = false;
  #stopWaiting: (() => void) | undefined;
  readonly #pending = new Map<string, PendingCall>();
  /** Per agent, what its previous model call was sent, to store only what is new. */
  readonly #lastSent = new Map<string, ModelMessage[]>();
  #queue: RunCalls = { model: [], tool: [] };
  #timer: NodeJS.Timeout | undefined;
  readonly #flushOnExit = (): void => this.#flush();
  #modelSeq = 0;
  #toolSeq = 0;
  #step = 0;
  readonly #started = Date.now();

  private constructor(options: RunRecorderOptions) {
    this.#options = options;
    this.id = newRunId(this.#started);
    process.on("exit", this.#flushOnExit);
  }

  /** Open the store and record the run's start at once; `undefined` (after one warning) when the store is unusable. */
  static async start(options: RunRecorderOptions): Promise<RunRecorder | undefined> {
    const recorder = new RunRecorder(options);
    recorder.#open();
    return recorder.failed ? undefined : recorder;
  }

  /**
   * A recorder whose store opens off the run's critical path: once the first request of the run is on the wire
   * (loading libsql and opening the file then overlap the wait for the model), or at the first event after a model
   * call, a flush, the end of the run or the exit, whichever comes first. Until then events are kept in memory.
   */
  static begin(options: RunRecorderOptions): RunRecorder {
    const recorder = new RunRecorder(options);
    recorder.#openAfterFirstRequest();
    return recorder;
  }

  /** The store could not be opened or written: nothing more is recorded (the one warning is given). */
  get failed(): boolean {
    return this.#failed;
  }

  #openAfterFirstRequest(): void {
    const stopWaiting = (): void => {
      for (const name of REQUEST_SENT) diagnostics_channel.unsubscribe(name, sent);
    };
    const sent = (): void => {
      stopWaiting();
      setImmediate(() => this.#open());
    };
    for (const name of REQUEST_SENT) diagnostics_channel.subscribe(name, sent);
    this.#stopWaiting = stopWaiting;
  }

  /** Open the store (once) and record the run's start, then what was queued before. */
  #open(): void {
    if (this.#opened) return;
    this.#opened = true;
    this.#stopWaiting?.();
    const options = this.#options;
    let store: RunStore | undefined;
    try {
      store = RunStore.shared(options.file);
      const { redactor } = options;
      store.beginRun({
        ...options.run,
        id: this.id,
        startedAt: this.#started,
        input: redactor.redact(options.run.input),
        vars: Object.fromEntries(Object.entries(options.run.vars).map(([key, value]) => [key, redactor.redact(value)])),
      });
      this.#store = store;
    } catch (error) {
      store?.close({ broken: true });
      this.#failed = true;
      process.off("exit", this.#flushOnExit);
      options.warn(`the run log ${options.file} cannot be written, this run is not logged: ${describe(error)}`);
      return;
    }
    if (this.#timer === undefined) this.#flush();
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
    // Anything after the first model call (its answer, a tool call) is a moment to open the store, if no request
    // on the wire has opened it yet (a scripted model, a model on another transport).
    if (event.type !== "model_call") this.#open();
    const redact = (text: string): string => this.#options.redactor.redact(text);
    if (event.type === "model_call") {
      const sent = event.sent ?? [];
      const kept = commonStart(this.#lastSent.get(event.agent) ?? [], sent);
      this.#lastSent.set(event.agent, sent.slice());
      this.#pending.set(event.agent, {
        step: this.#step++,
        agent: event.agent,
        round: event.round,
        model: event.model ?? null,
        startedAt: Date.now(),
        messagesKept: kept,
        messages: sent.slice(kept).map((message) => toStoredMessage(message, redact)),
        tools: event.tools,
        retries: [],
      });
    } else if (event.type === "model_reply") {
      const pending = this.#pending.get(event.agent);
      this.#pending.delete(event.agent);
      const cost = this.#options.tally.add(event);
      const record: ModelCallRecord = {
        seq: this.#modelSeq++,
        step: pending?.step ?? this.#step++,
        agent: event.agent,
        round: event.round,
        model: event.model ?? pending?.model ?? null,
        started_at: pending?.startedAt ?? Date.now(),
        latency_ms: event.latencyMs === undefined ? null : Math.round(event.latencyMs),
        messages: pending?.messages ?? [],
        tools: pending?.tools ?? [],
        reply: redact(event.text),
        tool_calls: event.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: redact(call.arguments) })),
        finish_reason: event.finishReason ?? null,
        prompt_tokens: event.usage.promptTokens,
        cached_prompt_tokens: event.usage.cachedPromptTokens ?? 0,
        completion_tokens: event.usage.completionTokens,
        reasoning_tokens: event.usage.reasoningTokens ?? 0,
        cost,
        retries: pending?.retries ?? [],
      };
      this.#enqueue(() => this.#queue.model.push({ record, messagesKept: pending?.messagesKept ?? 0 }));
    } else if (event.type === "tool_call") {
      const { call } = event;
      const record = {
        seq: this.#toolSeq++,
        step: this.#step++,
        agent: event.agent,
        call_id: call.id,
        name: call.name,
        arguments: JSON.parse(redact(JSON.stringify(call.arguments ?? {}))) as Record<string, unknown>,
        result: call.resultStr === undefined ? null : redact(call.resultStr),
        status: event.refused ? ("refused" as const) : call.error !== undefined ? ("error" as const) : event.repeated ? ("repeated" as const) : ("ok" as const),
        error: call.error === undefined ? null : redact(call.error),
        duration_ms: Math.round(event.durationMs),
        ended_at: Date.now(),
      };
      this.#enqueue(() => this.#queue.tool.push(record));
    }
  }

  /** Record how the run ended: its answer, or the error that stopped it. Closes the store. */
  finish(outcome: { output?: unknown; error?: unknown; exitCode?: number; details?: Record<string, unknown> }): void {
    const { tally, redactor } = this.#options;
    const error = outcome.error;
    const status = runStatusOf(error);
    const exitCode = outcome.exitCode ?? (error === undefined ? 0 : isLllmError(error) ? error.exitCode : 1);
    const endedAt = Date.now();
    const output = encodeOutput(outcome.output);
    this.#open();
    // The calls not yet written go with the outcome, in one transaction (one commit per run's end, not two).
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const calls = this.#queue;
    this.#queue = { model: [], tool: [] };
    process.off("exit", this.#flushOnExit);
    this.#write((store) =>
      store.finishRun(this.id, {
        endedAt,
        status,
        exitCode,
        errorCode: error === undefined ? null : isLllmError(error) ? error.code : "internal_error",
        errorMessage: error === undefined ? null : redactor.redact(describe(error)),
        output: output === null ? null : redactor.redact(output),
        details: outcome.details && Object.keys(outcome.details).length > 0 ? redactor.redact(JSON.stringify(outcome.details)) : null,
        models: [...new Set([...this.#options.run.models, ...tally.models])],
        llmCalls: tally.llmCalls,
        cost: tally.cost,
        durationMs: endedAt - this.#started,
        ...tally.usage,
      }, calls),
    );
    this.#store?.close();
    this.#store = undefined;
  }

  #enqueue(add: () => void): void {
    add();
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flush(), FLUSH_DELAY_MS);
      this.#timer.unref(); // never keeps the process alive
    }
  }

  #flush(): void {
    this.#open();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const queue = this.#queue;
    if (queue.model.length === 0 && queue.tool.length === 0) return;
    this.#queue = { model: [], tool: [] };
    this.#write((store) => store.addCalls(this.id, queue));
  }

  #write(action: (store: RunStore) => void): void {
    if (!this.#store) return;
    try {
      action(this.#store);
    } catch (error) {
      this.#failed = true;
      this.#options.warn(`the run log ${this.#options.file} cannot be written, the rest of this run is not logged: ${describe(error)}`);
      try {
        this.#store.close({ broken: true });
      } catch {
        // Already unusable: nothing more to do.
      }
      this.#store = undefined;
    }
  }
}

/** How many messages two sends start with in common (the dialog grows; retries' scratch comes and goes). */
function commonStart(before: readonly ModelMessage[], now: readonly ModelMessage[]): number {
  const length = Math.min(before.length, now.length);
  let index = 0;
  while (index < length && sameMessage(before[index]!, now[index]!)) index += 1;
  return index;
}

function sameMessage(a: ModelMessage, b: ModelMessage): boolean {
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === "tool" && b.role === "tool") return a.toolCallId === b.toolCallId && a.name === b.name;
  if (a.role === "assistant" && b.role === "assistant") return a.toolCalls === b.toolCalls || JSON.stringify(a.toolCalls ?? null) === JSON.stringify(b.toolCalls ?? null);
  return true;
}

function toStoredMessage(message: ModelMessage, redact: (text: string) => string): StoredMessage {
  const stored: StoredMessage = { role: message.role, content: message.content === null ? null : redact(message.content) };
  if (message.role === "assistant" && message.toolCalls) stored.toolCalls = message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: redact(call.arguments) }));
  if (message.role === "tool") {
    stored.toolCallId = message.toolCallId;
    if (message.name !== undefined) stored.name = message.name;
  }
  return stored;
}

/** How a run that ended with this error (or none) is filed. */
export function runStatusOf(error: unknown): "ok" | "interrupted" | "budget" | "error" {
  return error === undefined ? "ok" : error instanceof InterruptedError ? "interrupted" : error instanceof BudgetError ? "budget" : "error";
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
