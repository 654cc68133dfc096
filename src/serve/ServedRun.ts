import type { AgentEvent, Message } from "../agent/index.js";
import type { ApprovalPolicy, ApprovalRequest } from "../approval/index.js";
import type { RunLimits } from "../limits/index.js";
import type { RunLimitName } from "../errors.js";
import type { MediaAttachment, Model, ResponseFormat } from "../providers/Model.js";
import { runRecorded, type RecordedRun } from "../run/runRecorded.js";
import type { ServedRunInfo } from "../store/RunRecord.js";
import { patternAgentName } from "../tactics/patternAgent.js";
import { UsageCounter } from "../tactics/UsageCounter.js";
import type { FunctionCall } from "../tools/FunctionCall.js";
import { ClientTool, type ClientToolSpec } from "./ClientTool.js";
import type { ApprovalCall, ClientCall, RunHandle, RunListener, RunOutcome } from "./RunHandle.js";
import type { ServedModel } from "./ServedModels.js";
import { newWireId } from "./newWireId.js";

export type { ApprovalCall, ClientCall, RunListener, RunOutcome } from "./RunHandle.js";

/** How the client's tools may be called (OpenAI's `tool_choice`): `auto`, `none`, `required`, or one tool by name. */
export type ClientToolChoice = "auto" | "none" | "required" | { name: string };

export interface ServedRunOptions {
  model: ServedModel;
  input: string;
  /** The images sent with the input (the agent pattern: its turn's user message). */
  inputMedia?: MediaAttachment[];
  /** Earlier turns and the client's system messages, after the tactic's system prompt (the agent pattern). */
  history?: Message[];
  clientTools?: ClientToolSpec[];
  toolChoice?: ClientToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  /** Under every agent's `model_args`: the client's temperature, top_p, seed, stop, max_tokens. */
  modelArgs?: Record<string, unknown>;
  limits?: RunLimits;
  /** Where each of `limits` was set (the server's flag, the client's header or metadata), for a limit's message. */
  limitSources?: Partial<Record<RunLimitName, string>>;
  served: ServedRunInfo;
  approve: ApprovalPolicy;
  /**
   * A call that needs approval and that `approve` refuses is asked of the client instead: the run pauses there (an
   * `approval` outcome) until `answerApproval` (A2A's input-required).
   */
  askApproval?: boolean;
  /** Stream the answer's text (the model is asked to stream). */
  stream: boolean;
  log?: boolean;
  /** The environment's credentials as the server or worker read them when it started (see `startRunLog`). */
  environmentSecrets?: readonly string[];
  warn: (message: string) => void;
}

interface PendingCall {
  call: ClientCall;
  resolve: (text: string) => void;
  reject: (reason: unknown) => void;
}

/** The round of tool calls the entry agent is in, while it has client calls. */
interface Round {
  ids: string[];
  settled: Set<string>;
  text: string;
}

/**
 * One run of a served tactic, across the requests that carry it: the first starts it, and when the model calls
 * client tools the run pauses there (its record, budget, dialog and id stay open), the request is answered with
 * the calls, and a later request that brings their results continues it. A closed connection aborts it.
 *
 * The agent loop knows nothing of this: a client's tool is a `ClientTool` whose call waits for its result. The
 * run is paused once every call of the round has either run (the server's own tools) or is waiting for the client,
 * which the run's events and the waiting calls tell.
 */
export class ServedRun implements RunHandle {
  readonly usage = new UsageCounter();
  readonly model: ServedModel;
  readonly #controller = new AbortController();
  readonly #options: ServedRunOptions;
  readonly #entryAgent: string | undefined;
  readonly #clientNames: Set<string>;
  #listener: RunListener | undefined;
  #outcome!: { promise: Promise<RunOutcome>; resolve: (outcome: RunOutcome) => void };
  #round: Round | undefined;
  readonly #pending = new Map<string, PendingCall>();
  /**
   * The ids the client was given, by the model's ids. Never the model's own: those are often predictable (`call_0`
   * from local servers, Gemini's numbered ones), and the id is what continues a paused run, so another client of
   * the server could send results for this client's calls and read its answer.
   */
  readonly #wireIds = new Map<string, string>();
  #finished: RecordedRun | undefined;
  #settle!: (run: RecordedRun) => void;
  /** Settles with the run's end, however it ends (a paused run cancelled while nobody waits included). */
  readonly done: Promise<RecordedRun> = new Promise((resolve) => (this.#settle = resolve));
  /** The text streamed since the entry agent's last model call: what the client already has of the answer. */
  #streamedSinceCall = "";
  /** The text of the entry agent's last reply (what a run stopped by a limit had answered so far). */
  #lastText = "";
  /** The call waiting for the client's approval, and how to answer it. */
  #approval: { call: ApprovalCall; answer: (allowed: boolean) => void } | undefined;

  constructor(options: ServedRunOptions) {
    this.#options = options;
    this.model = options.model;
    this.#entryAgent = patternAgentName(options.model.prepared);
    this.#clientNames = new Set((options.clientTools ?? []).map((tool) => tool.name));
    this.#renewOutcome();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** What the entry agent said last, for an error that stops the run before its answer. */
  get lastText(): string {
    return this.#lastText;
  }

  /** The text streamed of the final answer so far. */
  get streamedSinceCall(): string {
    return this.#streamedSinceCall;
  }

  /** Start the run; `next()` tells how it pauses or ends. */
  start(): void {
    const options = this.#options;
    const choice = options.toolChoice ?? "auto";
    const offered = choice === "none" ? [] : (options.clientTools ?? []).filter((tool) => typeof choice !== "object" || tool.name === choice.name);
    const tools = offered.map((spec) => new ClientTool(spec, (call, signal) => this.#waitForClient(call, signal)));
    const wrapModel = choice === "required" || typeof choice === "object" || options.parallelToolCalls === false ? (model: Model) => clientChoiceModel(model, { required: choice === "required" || typeof choice === "object", parallel: options.parallelToolCalls !== false }) : undefined;
    void runRecorded(options.model.prepared, {
      input: options.input,
      ...(options.history && options.history.length > 0 ? { history: options.history } : {}),
      signal: this.#controller.signal,
      approve: options.askApproval ? (request) => this.#askClient(request) : options.approve,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.limitSources ? { limitSources: options.limitSources } : {}),
      ...(options.modelArgs ? { modelArgs: options.modelArgs } : {}),
      turn: { ...(tools.length > 0 ? { tools } : {}), ...(options.responseFormat ? { responseFormat: options.responseFormat } : {}), ...(wrapModel ? { wrapModel } : {}), ...(options.inputMedia ? { media: options.inputMedia } : {}) },
      served: options.served,
      ...(options.environmentSecrets ? { environmentSecrets: options.environmentSecrets } : {}),
      ...(options.log !== undefined ? { log: options.log } : {}),
      warn: options.warn,
      usage: this.usage,
      ...(options.stream ? { onText: (delta: string) => this.#onText(delta) } : {}),
      onEvent: (event) => this.#onEvent(event),
    }).then(
      (run) => this.#finish(run),
      // runRecorded returns its failures; a throw here is a defect, answered as a failed run.
      (error: unknown) => this.#finish({ ok: false, error, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0, cachedPromptTokens: 0, reasoningTokens: 0 }, cost: null }),
    );
  }

  /** The next pause or the end, with `listener` receiving the text streamed until then. */
  next(listener: RunListener | undefined): Promise<RunOutcome> {
    this.#listener = listener;
    return this.#outcome.promise;
  }

  /** The calls the run waits for, as the client was told of them. */
  get waitingFor(): ClientCall[] {
    return [...this.#pending.values()].map((pending) => pending.call);
  }

  /**
   * Go on with the client's results, by the ids it was given; every call the run waits for must have one (the
   * caller checks, see `missingResults`).
   */
  resume(results: ReadonlyMap<string, string>): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of pending) entry.resolve(results.get(entry.call.id) ?? "");
  }

  /** The call waiting for the client's approval, if the run waits for one. */
  get waitingApproval(): ApprovalCall | undefined {
    return this.#approval?.call;
  }

  /** Go on past the call waiting for approval: run it (`allowed`) or refuse it (the model reads the refusal). */
  answerApproval(allowed: boolean): void {
    const approval = this.#approval;
    this.#approval = undefined;
    approval?.answer(allowed);
  }

  /** The ids of the calls the run waits for that `results` lacks. */
  missingResults(results: ReadonlyMap<string, string>): string[] {
    return this.waitingFor.filter((call) => !results.has(call.id)).map((call) => call.id);
  }

  /** Cancel the run (its record says interrupted); what waits for a client's result is released. */
  abort(reason: unknown): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  #renewOutcome(): void {
    let resolve!: (outcome: RunOutcome) => void;
    const promise = new Promise<RunOutcome>((settle) => (resolve = settle));
    this.#outcome = { promise, resolve };
  }

  #onText(delta: string): void {
    this.#streamedSinceCall += delta;
    this.#listener?.text?.(delta);
  }

  #onEvent(event: AgentEvent): void {
    this.#listener?.event?.(event);
    if (event.agent !== this.#entryAgent) return;
    if (event.type === "model_call") {
      this.#streamedSinceCall = "";
    } else if (event.type === "model_reply") {
      this.#lastText = event.text;
      const hasClientCall = event.toolCalls.some((call) => this.#clientNames.has(call.name));
      this.#round = hasClientCall ? { ids: event.toolCalls.map((call) => call.id), settled: new Set(), text: event.text } : undefined;
    } else if (event.type === "tool_call" && this.#round?.ids.includes(event.call.id)) {
      this.#round.settled.add(event.call.id);
      this.#checkPause();
    }
  }

  #waitForClient(call: FunctionCall, signal: AbortSignal | undefined): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => reject(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      let wire = this.#wireIds.get(call.id);
      if (wire === undefined) {
        wire = newWireId("call_");
        this.#wireIds.set(call.id, wire);
      }
      const args = JSON.stringify(call.arguments);
      this.#pending.set(call.id, {
        call: { id: wire, name: call.name, arguments: args },
        resolve: (text) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(text);
        },
        reject,
      });
      this.#round?.settled.add(call.id);
      this.#checkPause();
    });
  }

  /**
   * The server's policy first (`--approve all` runs the call); else the run pauses until the client answers. A run
   * cancelled while it waits refuses the call (and ends as cancelled).
   */
  async #askClient(request: ApprovalRequest): Promise<boolean> {
    if (await this.#options.approve(request)) return true;
    const signal = request.signal ?? this.#controller.signal;
    if (signal.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        this.#approval = undefined;
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const call: ApprovalCall = { tool: request.tool, arguments: request.arguments, ...(request.agent !== undefined ? { agent: request.agent } : {}) };
      this.#approval = {
        call,
        answer: (allowed) => {
          signal.removeEventListener("abort", onAbort);
          resolve(allowed);
        },
      };
      const paused = this.#outcome;
      this.#renewOutcome();
      paused.resolve({ type: "approval", call });
    });
  }

  /** Pause once every call of the round has run or waits for the client, and one does. */
  #checkPause(): void {
    const round = this.#round;
    if (!round || round.ids.some((id) => !round.settled.has(id))) return;
    this.#round = undefined;
    if (this.#pending.size === 0) return;
    // In the order the model asked for them.
    const calls = round.ids.flatMap((id) => {
      const pending = this.#pending.get(id);
      return pending ? [pending.call] : [];
    });
    // The next request waits for what comes after this pause.
    const paused = this.#outcome;
    this.#renewOutcome();
    paused.resolve({ type: "paused", calls, text: round.text });
  }

  #finish(run: RecordedRun): void {
    this.#finished = run;
    for (const pending of this.#pending.values()) pending.reject(this.#controller.signal.reason);
    this.#pending.clear();
    this.#outcome.resolve({ type: "finished", run });
    this.#settle(run);
  }

  get finished(): RecordedRun | undefined {
    return this.#finished;
  }
}

/**
 * The entry agent's model, held to the client's `tool_choice` and `parallel_tool_calls`: a call must be made on the
 * turn's first request that offers tools (`required`, or a tool named: only that one of the client's is offered);
 * `parallel_tool_calls: false` is passed with every request that offers tools.
 */
function clientChoiceModel(model: Model, choice: { required: boolean; parallel: boolean }): Model {
  let first = choice.required;
  return {
    name: model.name,
    generate(request) {
      if (!request.tools || request.tools.length === 0) return model.generate(request);
      const required = first;
      first = false;
      return model.generate({ ...request, ...(required ? { toolChoice: "required" as const } : {}), ...(choice.parallel ? {} : { modelArgs: { ...request.modelArgs, parallel_tool_calls: false } }) });
    },
  };
}
