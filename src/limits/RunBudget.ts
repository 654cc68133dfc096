import { performance } from "node:perf_hooks";
import { ConfigError, RunLimitError, type ErrorCode, type RunLimitName } from "../errors.js";
import type { Model, ModelRequest, ModelResponse } from "../providers/Model.js";
import type { ModelPrice, PriceTable } from "../providers/PriceTable.js";
import { limitNode, roomsFor, type LimitNode, type LimitSource, type Room } from "./LimitNode.js";
import { maxAnswerTokens, MIN_ANSWER_TOKENS, PromptSizer } from "./requestSize.js";
import { formatDollars, formatLimit, type RunLimits } from "./RunLimits.js";
import { countModelCall, describeSpend, type AgentSpend, type SpendReport, type ToolSpend } from "./SpendReport.js";
import type { ToolBudget } from "./ToolBudget.js";
import { roundCost } from "../util/roundCost.js";
import { timerDelay } from "../util/timerDelay.js";

export type { LimitSource } from "./LimitNode.js";

export interface RunBudgetOptions {
  limits?: RunLimits;
  /** The models' prices: the shipped table with the project's `prices:` over it. */
  prices: PriceTable;
  /** Where each limit was set; default `limits.<name>`. */
  source?: LimitSource;
  /**
   * What earlier attempts of the run spent that it does not count again (a resumed run replays its recorded model
   * and tool calls through the budget, which counts them): the time they took, in milliseconds.
   */
  spentBefore?: { durationMs: number };
}

/** Tokens per character of a prompt before a model has answered once (then its own ratio is used): a generous guess. */
const FIRST_TOKENS_PER_CHARACTER = 0.5;
/** The measured ratio is raised by this much: the next prompt's new part may tokenize a little worse. */
const ESTIMATE_MARGIN = 1.1;
/** The price taken for a model without one when only tokens are limited (a cost limit refuses such a model). */
const FREE: ModelPrice = { input: 0, output: 0 };

/** What every scope of one run tree shares. */
interface BudgetState {
  readonly controller: AbortController;
  tripped: RunLimitError | undefined;
  readonly prices: PriceTable;
  readonly total: SpendReport;
  readonly byAgent: Map<string, AgentSpend>;
  readonly byTool: Map<string, ToolSpend>;
  /** Prompt tokens per character, by model, from its latest answer: how the next prompt is estimated. */
  readonly tokensPerCharacter: Map<string, number>;
  /** Requests let through and not answered yet (their worst cases held). */
  onTheirWay: number;
  /** Requests waiting for the reservations of requests on their way to be released (see `#admit`). */
  readonly waiting: Set<() => void>;
}

/**
 * A request let through: its estimated prompt and the answer room it is sent with, held against the limits until
 * its answer is counted (its worst case), and the estimate calibrated with the answer's usage.
 */
interface Admission {
  characters: number;
  promptTokens: number;
  /** The answer tokens the request asked for: its `model_args`' limit, or the assumed default. */
  requestedTokens: number;
  /** The answer tokens it is sent with: the requested ones, cut to what every limit can still pay. */
  answerTokens: number;
  /** Its worst cost: the prompt and `answerTokens` at the model's prices. */
  worstCost: number;
  /** The limit that cut the answer room, when one did: named when the answer comes back cut off. */
  cutBy?: { node: LimitNode; limit: "max_cost" | "max_tokens" };
}

/**
 * The budget of one run tree: it counts every model call and tool call of the run, of its nested tactics, code-action
 * programs, agents used as tools and judges, attributes them to agents and tools, and is asked before each model
 * request and each tool call.
 *
 * Under `max_cost` or `max_tokens`, each request is sent with the answer room the budget can pay: its `max_tokens`
 * (the `model_args`' limit, else `ASSUMED_MAX_ANSWER_TOKENS`) cut to what is left once its estimated prompt is paid
 * (`ModelRequest.maxAnswerTokens`, which each provider sends in its own field). The prompt and that room are held
 * against the limits while the request is on its way, so calls in parallel cannot cross the line together; a request
 * that would get less than `MIN_ANSWER_TOKENS` waits for the requests on their way to be answered, and the run stops
 * (before the call) when even that minimum cannot be paid. Each answer is counted when it comes: one that brings the
 * spend past a limit (a prompt larger than estimated, a server that ignores `max_tokens`) or that was cut off at a
 * room the budget cut (`finish_reason: length`: not a complete answer) stops the run, but is returned first, so
 * that the run's listeners count and record it. A limit reached anywhere stops the whole run: the budget aborts its
 * `signal` with the `RunLimitError`, so that every part of the run (programs, nested runs, tools that listen) stops,
 * and throws it at the next request or tool call.
 *
 * Each instance is a scope of the tree: `child()` gives the scope of a nested tactic or an agent used as a tool
 * (its spend counted for the tool, with limits of its own if it has them).
 */
export class RunBudget implements ToolBudget {
  readonly #state: BudgetState;
  readonly #node: LimitNode;
  readonly #ownsNode: boolean;
  /** The tools whose calls this scope runs inside, outermost first. */
  readonly #tools: readonly string[];

  private constructor(state: BudgetState, node: LimitNode, ownsNode: boolean, tools: readonly string[]) {
    this.#state = state;
    this.#node = node;
    this.#ownsNode = ownsNode;
    this.#tools = tools;
    if (ownsNode) this.#startTimer(node);
  }

  /** The budget of a new run tree (its top scope). Call `close()` when the run ends. */
  static start(options: RunBudgetOptions): RunBudget {
    const state: BudgetState = {
      controller: new AbortController(),
      tripped: undefined,
      prices: options.prices,
      total: { modelCalls: 0, toolCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0, byAgent: {}, byTool: {} },
      byAgent: new Map(),
      byTool: new Map(),
      tokensPerCharacter: new Map(),
      onTheirWay: 0,
      waiting: new Set(),
    };
    const node = limitNode(options.limits ?? {}, options.source, undefined);
    // The run's time began with its first attempt: `max_duration` is for the whole run.
    if (options.spentBefore) node.startedAt -= options.spentBefore.durationMs;
    return new RunBudget(state, node, true, []);
  }

  /** Aborted, with the `RunLimitError` as its reason, when a limit is reached: the run's parts stop on it. */
  get signal(): AbortSignal {
    return this.#state.controller.signal;
  }

  /** The limits of this scope (the run's, or a nested tactic's own). */
  get limits(): RunLimits {
    return this.#node.limits;
  }

  /** The error that stopped the run, once a limit was reached. */
  get tripped(): RunLimitError | undefined {
    return this.#state.tripped;
  }

  /**
   * The scope of a call inside this one: a nested tactic or an agent used as a tool. `tool` is the tool whose call it
   * is (its spend is counted for that tool too); `limits` are its own, checked besides every enclosing scope's. The
   * agents of the scope are counted under the names they are given (a nested tactic's run names them `<tool>/<agent>`).
   */
  child(options: { tool?: string; limits?: RunLimits; source?: LimitSource }): RunBudget {
    const node = options.limits ? limitNode(options.limits, options.source, this.#node) : this.#node;
    return new RunBudget(this.#state, node, options.limits !== undefined, options.tool === undefined ? this.#tools : [...this.#tools, options.tool]);
  }

  /** Stop this scope's timer (a nested tactic's `max_duration`, or the run's); the counts stay readable. */
  close(): void {
    if (this.#ownsNode) clearTimeout(this.#node.timer);
  }

  /**
   * `model` for `agent`: each request is let through (with the answer room the budget can pay) before it is sent,
   * and counted when it is answered, at the price of the model that answered (`response.model`, for a fallback chain).
   */
  guardModel(model: Model, agent: string): Model {
    const sizer = new PromptSizer();
    return {
      name: model.name,
      generate: async (request) => {
        const admission = await this.#admit(model.name, request, sizer);
        let response: ModelResponse;
        try {
          response = await model.generate(admission ? { ...request, maxAnswerTokens: admission.answerTokens } : request);
        } finally {
          this.#release(admission);
        }
        this.#afterModelCall(agent, response, model.name, admission);
        return response;
      },
    };
  }

  /**
   * Count an answer that was paid for outside this process's calls (a resumed run's answer that is asked for again:
   * an earlier attempt spent it). It may stop the run as any answer does.
   */
  countAnswer(agent: string, answer: Pick<ModelResponse, "usage" | "model">, model: string): void {
    this.#afterModelCall(agent, { message: { role: "assistant", content: "" }, toolCalls: [], ...answer }, model, undefined);
  }

  beforeToolCall(call: { agent: string; tool: string }): void {
    this.#throwIfStopped();
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      const max = node.limits.maxToolCalls;
      if (max !== undefined && node.toolCalls + 1 > max) {
        throw this.#trip("limit_max_tool_calls", node, node.toolCalls, `the run has made ${formatLimit("max_tool_calls", node.toolCalls)}, its limit; \`${call.tool}\` (agent \`${call.agent}\`) was not run`);
      }
    }
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) node.toolCalls += 1;
    this.#state.total.toolCalls += 1;
    this.#agent(call.agent).toolCalls += 1;
    this.#tool(call.tool).calls += 1;
  }

  afterToolCall(call: { agent: string; tool: string; durationMs: number; failed: boolean }): void {
    const spend = this.#tool(call.tool);
    spend.durationMs += call.durationMs;
    if (call.failed) spend.failed += 1;
  }

  /** What the whole run tree spent so far, in all, by agent and by tool. */
  report(): SpendReport {
    const { total, byAgent, byTool } = this.#state;
    return { ...total, byAgent: Object.fromEntries([...byAgent].map(([name, spend]) => [name, { ...spend }])), byTool: Object.fromEntries([...byTool].map(([name, spend]) => [name, { ...spend }])) };
  }

  /**
   * Let a request through with the answer room every limit can pay (undefined when no cost or token limit applies),
   * holding its prompt and that room against the limits; wait while the requests on their way hold what it needs;
   * stop the run when even `MIN_ANSWER_TOKENS` (or the request's own smaller limit) cannot be paid.
   */
  async #admit(model: string, request: ModelRequest, sizer: PromptSizer): Promise<Admission | undefined> {
    this.#throwIfStopped();
    let limited = false;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      if (node.limits.maxTokens !== undefined) limited = true;
      // A model without a price cannot be counted under a cost limit: the user's to fix (exit 2), before any spend.
      if (node.limits.maxCost !== undefined) {
        this.#priceOf(model, "max_cost", node);
        limited = true;
      }
    }
    if (!limited) return undefined;
    const price = this.#state.prices.priceOf(model) ?? FREE;
    const characters = sizer.measure(request);
    const ratio = this.#state.tokensPerCharacter.get(model) ?? FIRST_TOKENS_PER_CHARACTER;
    const promptTokens = Math.ceil(characters * ratio * ESTIMATE_MARGIN);
    const requestedTokens = maxAnswerTokens(request, model);
    const least = Math.min(MIN_ANSWER_TOKENS, requestedTokens);
    for (;;) {
      this.#throwIfStopped();
      if (request.signal?.aborted) throw request.signal.reason;
      const rooms = roomsFor(this.#node, promptTokens, price);
      const short = rooms.filter((room) => room.now < least);
      if (short.length > 0) {
        // What the requests on their way hold may come back (they answer with less than their worst case): wait for
        // them before stopping, so that their answers are counted, and then see again.
        if (this.#state.onTheirWay > 0) {
          await this.#released(request.signal);
          continue;
        }
        throw this.#tooLittleLeft(short[0]!, model, promptTokens, least, price);
      }
      let answerTokens = requestedTokens;
      let cutBy: Admission["cutBy"];
      for (const room of rooms) {
        if (room.now < answerTokens) {
          answerTokens = Math.floor(room.now);
          cutBy = { node: room.node, limit: room.limit };
        }
      }
      const worstCost = (promptTokens * price.input + answerTokens * price.output) / 1_000_000;
      for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
        node.reservedCost += worstCost;
        node.reservedTokens += promptTokens + answerTokens;
      }
      this.#state.onTheirWay += 1;
      return { characters, promptTokens, requestedTokens, answerTokens, worstCost, ...(cutBy ? { cutBy } : {}) };
    }
  }

  /** Resolves when a request on its way is answered (or failed), or the run stops or is cancelled (the caller checks which). */
  #released(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.#state.waiting.delete(done);
        this.signal.removeEventListener("abort", done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.#state.waiting.add(done);
      this.signal.addEventListener("abort", done);
      signal?.addEventListener("abort", done);
    });
  }

  /** The stop of a request that cannot get even the smallest answer room: before it is sent. */
  #tooLittleLeft(room: Room, model: string, promptTokens: number, least: number, price: ModelPrice): RunLimitError {
    const { node } = room;
    const needs = `about ${promptTokens.toLocaleString("en-US")} prompt tokens and ${least.toLocaleString("en-US")} answer tokens, the least a call is sent with`;
    if (room.limit === "max_tokens") {
      return this.#trip("limit_max_tokens", node, node.tokens, `${formatLimit("max_tokens", node.tokens)} used, and the next call to ${model} needs ${(promptTokens + least).toLocaleString("en-US")} more (${needs}); stopped before it`);
    }
    const least$ = (promptTokens * price.input + least * price.output) / 1_000_000;
    return this.#trip("limit_max_cost", node, node.cost, `${formatDollars(node.cost)} spent, and the next call to ${model} needs ${formatDollars(least$)} more (${needs}); stopped before it`);
  }

  /** The request was answered (or failed): its worst case no longer holds a place, and waiting requests see again. */
  #release(admission: Admission | undefined): void {
    if (!admission) return;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      node.reservedCost -= admission.worstCost;
      node.reservedTokens -= admission.promptTokens + admission.answerTokens;
      // Sums of floats: what is left when nothing is on its way is rounding, not a reservation.
      if (node.reservedCost < 1e-12) node.reservedCost = 0;
    }
    this.#state.onTheirWay -= 1;
    for (const wake of [...this.#state.waiting]) wake();
  }

  /**
   * Count an answer. One that brought the spend past a limit, or that was cut off at an answer room a limit cut,
   * stops the run (the signal aborts; the next request or tool call throws), but it is returned all the same.
   */
  #afterModelCall(agent: string, response: ModelResponse, asked: string, admission: Admission | undefined): void {
    const model = response.model ?? asked;
    const { usage } = response;
    const { total } = this.#state;
    const cost = this.#state.prices.costOf(model, usage);
    if (admission && usage.promptTokens > 0 && admission.characters > 0) this.#state.tokensPerCharacter.set(model, usage.promptTokens / admission.characters);
    countModelCall(total, usage, cost);
    countModelCall(this.#agent(agent), usage, cost);
    for (const tool of this.#tools) countModelCall(this.#tool(tool), usage, cost);
    const tokens = usage.promptTokens + usage.completionTokens;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      node.tokens += tokens;
      node.cost = roundCost(node.cost + (cost ?? 0));
    }
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      const { maxCost, maxTokens } = node.limits;
      if (maxTokens !== undefined && node.tokens > maxTokens) return void this.#trip("limit_max_tokens", node, node.tokens, `${formatLimit("max_tokens", node.tokens)} used after the answer of ${model} (agent \`${agent}\`)`);
      if (maxCost !== undefined && node.cost > maxCost) return void this.#trip("limit_max_cost", node, node.cost, `${formatDollars(node.cost)} spent after the answer of ${model} (agent \`${agent}\`)`);
    }
    const cut = admission?.cutBy;
    if (cut && response.finishReason === "length") {
      const code = cut.limit === "max_cost" ? "limit_max_cost" : "limit_max_tokens";
      this.#trip(code, cut.node, cut.limit === "max_cost" ? cut.node.cost : cut.node.tokens, `the answer of ${model} (agent \`${agent}\`) was cut off at ${admission.answerTokens.toLocaleString("en-US")} answer tokens, all that was left could pay (it asked for up to ${admission.requestedTokens.toLocaleString("en-US")}), and a cut answer is not a complete one`);
    }
  }

  /** A cost limit cannot count a model it has no price for: that is the user's to fix (exit 2), before any spend. */
  #priceOf(model: string, limit: RunLimitName, node: LimitNode): ModelPrice {
    const price = this.#state.prices.priceOf(model);
    if (price) return price;
    throw new ConfigError("limit_unpriced_model", `model \`${model}\` has no known price, so ${node.source(limit)} cannot count what it costs`, {
      hint: `Give its price in the project settings (.lllmrc.yaml): prices: {"${model}": {input: <$ per million prompt tokens>, output: <$ per million answer tokens>}}, or drop the cost limit.`,
    });
  }

  #agent(name: string): AgentSpend {
    let spend = this.#state.byAgent.get(name);
    if (!spend) this.#state.byAgent.set(name, (spend = { modelCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0, toolCalls: 0 }));
    return spend;
  }

  #tool(name: string): ToolSpend {
    let spend = this.#state.byTool.get(name);
    if (!spend) this.#state.byTool.set(name, (spend = { calls: 0, failed: 0, durationMs: 0, modelCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0 }));
    return spend;
  }

  /** Throw the error that stopped the run, or a `max_duration` error when a deadline has passed unnoticed. */
  #throwIfStopped(): void {
    const { tripped } = this.#state;
    if (tripped) throw tripped;
    // The timers stop a run that waits; this catches a deadline passed while the event loop was busy.
    let now: number | undefined;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      if (node.deadline !== undefined && (now ??= performance.now()) >= node.deadline) throw this.#durationReached(node);
    }
  }

  #startTimer(node: LimitNode): void {
    const max = node.limits.maxDuration;
    if (max === undefined) return;
    node.deadline = node.startedAt + max * 1000;
    this.#armTimer(node, node.deadline);
  }

  /**
   * The timer stops a run that waits (a slow tool, a slow model) as well as one that keeps calling. A timer waits at
   * most about 24.8 days (2^31 - 1 ms; a longer one fires at once): a later deadline is armed again when it fires.
   */
  #armTimer(node: LimitNode, deadline: number): void {
    node.timer = setTimeout(() => {
      if (this.#state.tripped) return;
      if (performance.now() < deadline) this.#armTimer(node, deadline);
      else this.#durationReached(node);
    }, timerDelay(deadline - performance.now()));
    node.timer.unref();
  }

  #durationReached(node: LimitNode): RunLimitError {
    const seconds = (performance.now() - node.startedAt) / 1000;
    return this.#trip("limit_max_duration", node, seconds, `the run has taken ${formatLimit("max_duration", Math.round(seconds * 10) / 10)}`);
  }

  /** Stop the run: keep the first error, abort the signal with it, and return it to throw. */
  #trip(code: ErrorCode, node: LimitNode, spent: number, detail: string): RunLimitError {
    if (this.#state.tripped) return this.#state.tripped;
    const limit = limitOf(code);
    const value = node.limits[LIMIT_KEYS[limit]]!;
    const error = new RunLimitError(code, `${limit} reached (${formatLimit(limit, value)}, ${node.source(limit)}): ${detail}. Spent ${describeSpend(this.report())}.`, {
      limit,
      value,
      spent,
      hint: `Raise the limit (${node.source(limit)}), or give the run less to do.`,
    });
    this.#state.tripped = error;
    this.#state.controller.abort(error);
    return error;
  }
}

const LIMIT_KEYS: Record<RunLimitName, keyof RunLimits> = { max_cost: "maxCost", max_tokens: "maxTokens", max_tool_calls: "maxToolCalls", max_duration: "maxDuration" };

function limitOf(code: ErrorCode): RunLimitName {
  return code.slice("limit_".length) as RunLimitName;
}
