import { performance } from "node:perf_hooks";
import { ConfigError, RunLimitError, type ErrorCode, type RunLimitName } from "../errors.js";
import type { Model, ModelRequest, Usage } from "../providers/Model.js";
import type { ModelPrice, PriceTable } from "../providers/PriceTable.js";
import { maxAnswerTokens, PromptSizer } from "./requestSize.js";
import { formatDollars, formatLimit, type RunLimits } from "./RunLimits.js";
import { addCost, describeSpend, type AgentSpend, type SpendReport, type ToolSpend } from "./SpendReport.js";
import type { ToolBudget } from "./ToolBudget.js";

/** Says where a limit was set, for messages: `--max-cost`, `limits.max_cost of research.yaml:4:9`. */
export type LimitSource = (name: RunLimitName) => string;

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
/** What a `scripted:` model costs: it replays turns and calls no provider. */
const FREE: ModelPrice = { input: 0, output: 0 };

/** One set of limits and what was spent under it: the run's, or a nested tactic's own (both count every call within). */
interface LimitNode {
  limits: RunLimits;
  source: LimitSource;
  parent: LimitNode | undefined;
  cost: number;
  tokens: number;
  toolCalls: number;
  /** The worst cases of the requests on their way (parallel calls), held until their answers are counted. */
  reservedCost: number;
  reservedTokens: number;
  startedAt: number;
  /** `performance.now()` when `max_duration` runs out. */
  deadline?: number;
  timer?: NodeJS.Timeout;
}

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
}

/**
 * A request's estimated size and worst case, kept from the check before it: the worst case is held against the
 * limits until the answer is counted, and the estimate is calibrated with the answer's usage.
 */
interface RequestEstimate {
  characters: number;
  promptTokens: number;
  answerTokens: number;
  worstCost: number;
}

/**
 * The budget of one run tree: it counts every model call and tool call of the run, of its nested tactics, code-action
 * programs, agents used as tools and judges, attributes them to agents and tools, and is asked before each model
 * request and each tool call. A request is refused when its worst case (the estimated prompt, plus `max_tokens`
 * answer tokens, at the model's price) would cross a limit, so the run stops before it crosses the line, not
 * after; each answer is checked too. A limit reached anywhere stops the whole run: the budget aborts its `signal`
 * with the `RunLimitError`, so that every part of the run (programs, nested runs, tools that listen) stops, and
 * throws it.
 *
 * Each instance is a scope of the tree: `child()` gives the scope of a nested tactic or an agent used as a tool
 * (its agents named under the tool, its spend counted for the tool, with limits of its own if it has them).
 */
export class RunBudget implements ToolBudget {
  readonly #state: BudgetState;
  readonly #node: LimitNode;
  readonly #ownsNode: boolean;
  /** Prefix of the agents' names in this scope: `` at the top, `<tool>/` in a nested tactic. */
  readonly #agentPrefix: string;
  /** The tools whose calls this scope runs inside, outermost first. */
  readonly #tools: readonly string[];

  private constructor(state: BudgetState, node: LimitNode, ownsNode: boolean, agentPrefix: string, tools: readonly string[]) {
    this.#state = state;
    this.#node = node;
    this.#ownsNode = ownsNode;
    this.#agentPrefix = agentPrefix;
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
    };
    const node = limitNode(options.limits ?? {}, options.source, undefined);
    // The run's time began with its first attempt: `max_duration` is for the whole run.
    if (options.spentBefore) node.startedAt -= options.spentBefore.durationMs;
    return new RunBudget(state, node, true, "", []);
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
   * The scope of a call inside this one: a nested tactic or an agent used as a tool. `tool` is the tool whose
   * call it is (its spend is counted for that tool too); `agentPrefix` names its agents (`briefing/` → the agent
   * `briefing/reporter`); `limits` are its own, checked besides every enclosing scope's.
   */
  child(options: { tool?: string; agentPrefix?: string; limits?: RunLimits; source?: LimitSource }): RunBudget {
    const node = options.limits ? limitNode(options.limits, options.source, this.#node) : this.#node;
    const prefix = options.agentPrefix === undefined ? this.#agentPrefix : `${this.#agentPrefix}${options.agentPrefix}`;
    return new RunBudget(this.#state, node, options.limits !== undefined, prefix, options.tool === undefined ? this.#tools : [...this.#tools, options.tool]);
  }

  /** Stop this scope's timer (a nested tactic's `max_duration`, or the run's); the counts stay readable. */
  close(): void {
    if (this.#ownsNode) clearTimeout(this.#node.timer);
  }

  /**
   * `model` for `agent` of this scope: each request is checked before it is sent and counted when it is answered,
   * at the price of the model that answered (`response.model`, for a fallback chain).
   */
  guardModel(model: Model, agent: string): Model {
    const name = `${this.#agentPrefix}${agent}`;
    const sizer = new PromptSizer();
    return {
      name: model.name,
      generate: (request) => {
        let estimate: RequestEstimate | undefined;
        try {
          estimate = this.#beforeModelCall(model.name, request, sizer);
        } catch (error) {
          return Promise.reject(error);
        }
        return model.generate(request).then(
          (response) => {
            this.#release(estimate);
            this.#afterModelCall(name, response.model ?? model.name, response.usage, estimate);
            return response;
          },
          (error: unknown) => {
            this.#release(estimate);
            throw error;
          },
        );
      },
    };
  }

  beforeToolCall(call: { agent: string; tool: string }): void {
    this.#throwIfStopped();
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      const max = node.limits.maxToolCalls;
      if (max !== undefined && node.toolCalls + 1 > max) {
        throw this.#trip("limit_max_tool_calls", node, node.toolCalls, `the run has made ${formatLimit("max_tool_calls", node.toolCalls)}, its limit; \`${call.tool}\` (agent \`${this.#agentPrefix}${call.agent}\`) was not run`);
      }
    }
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) node.toolCalls += 1;
    this.#state.total.toolCalls += 1;
    this.#agent(`${this.#agentPrefix}${call.agent}`).toolCalls += 1;
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

  #beforeModelCall(model: string, request: ModelRequest, sizer: PromptSizer): RequestEstimate | undefined {
    this.#throwIfStopped();
    let estimate: RequestEstimate | undefined;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      const { maxCost, maxTokens } = node.limits;
      if (maxCost === undefined && maxTokens === undefined) continue;
      estimate ??= this.#estimate(model, request, sizer, this.#price(model));
      const worstTokens = estimate.promptTokens + estimate.answerTokens;
      // Requests on their way count with their worst cases: parallel calls cannot cross the line together.
      if (maxTokens !== undefined && node.tokens + node.reservedTokens + worstTokens > maxTokens) {
        throw this.#trip("limit_max_tokens", node, node.tokens, `${formatLimit("max_tokens", node.tokens)} used${inFlight(node.reservedTokens > 0)}, and the next call to ${model} could use up to ${worstTokens.toLocaleString("en-US")} more (about ${estimate.promptTokens.toLocaleString("en-US")} prompt tokens, up to ${estimate.answerTokens.toLocaleString("en-US")} answer tokens); stopped before it`);
      }
      if (maxCost !== undefined) {
        this.#priceOf(model, "max_cost", node); // a model without a price cannot be counted: the user's to fix
        if (node.cost + node.reservedCost + estimate.worstCost > maxCost) {
          throw this.#trip("limit_max_cost", node, node.cost, `${formatDollars(node.cost)} spent${inFlight(node.reservedCost > 0)}, and the next call to ${model} could cost up to ${formatDollars(estimate.worstCost)} (about ${estimate.promptTokens.toLocaleString("en-US")} prompt tokens, up to ${estimate.answerTokens.toLocaleString("en-US")} answer tokens); stopped before it`);
        }
      }
    }
    if (estimate) {
      for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
        node.reservedCost += estimate.worstCost;
        node.reservedTokens += estimate.promptTokens + estimate.answerTokens;
      }
    }
    return estimate;
  }

  /** The request was answered (or failed): its worst case no longer holds a place. */
  #release(estimate: RequestEstimate | undefined): void {
    if (!estimate) return;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      node.reservedCost -= estimate.worstCost;
      node.reservedTokens -= estimate.promptTokens + estimate.answerTokens;
    }
  }

  #afterModelCall(agent: string, model: string, usage: Usage, estimate: RequestEstimate | undefined): void {
    const { total } = this.#state;
    const cost = model.startsWith("scripted:") ? 0 : this.#state.prices.costOf(model, usage);
    if (estimate && usage.promptTokens > 0 && estimate.characters > 0) this.#state.tokensPerCharacter.set(model, usage.promptTokens / estimate.characters);
    count(total, usage, cost);
    count(this.#agent(agent), usage, cost);
    for (const tool of this.#tools) count(this.#tool(tool), usage, cost);
    const tokens = usage.promptTokens + usage.completionTokens;
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      node.tokens += tokens;
      node.cost += cost ?? 0;
    }
    for (let node: LimitNode | undefined = this.#node; node; node = node.parent) {
      const { maxCost, maxTokens } = node.limits;
      if (maxTokens !== undefined && node.tokens > maxTokens) throw this.#trip("limit_max_tokens", node, node.tokens, `${formatLimit("max_tokens", node.tokens)} used after the answer of ${model} (agent \`${agent}\`)`);
      if (maxCost !== undefined && node.cost > maxCost) throw this.#trip("limit_max_cost", node, node.cost, `${formatDollars(node.cost)} spent after the answer of ${model} (agent \`${agent}\`)`);
    }
  }

  #estimate(model: string, request: ModelRequest, sizer: PromptSizer, price: ModelPrice | undefined): RequestEstimate {
    const characters = sizer.measure(request);
    const ratio = this.#state.tokensPerCharacter.get(model) ?? FIRST_TOKENS_PER_CHARACTER;
    const promptTokens = Math.ceil(characters * ratio * ESTIMATE_MARGIN);
    const answerTokens = maxAnswerTokens(request, model);
    // An unknown price matters only under a cost limit, which refuses the model before this.
    const worstCost = price ? (promptTokens * price.input + answerTokens * price.output) / 1_000_000 : 0;
    return { characters, promptTokens, answerTokens, worstCost };
  }

  #price(model: string): ModelPrice | undefined {
    return model.startsWith("scripted:") ? FREE : this.#state.prices.priceOf(model);
  }

  /** A cost limit cannot count a model it has no price for: that is the user's to fix (exit 2), before any spend. */
  #priceOf(model: string, limit: RunLimitName, node: LimitNode): ModelPrice {
    const price = this.#price(model);
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
    // The timer stops a run that waits (a slow tool, a slow model) as well as one that keeps calling.
    node.timer = setTimeout(() => {
      if (!this.#state.tripped) this.#durationReached(node);
    }, Math.max(0, node.deadline - performance.now()));
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

/** Count one model call in a spend: an agent's, a tool's, the run's. */
function count(spend: { modelCalls: number; promptTokens: number; completionTokens: number; cost: number | null }, usage: Usage, cost: number | null): void {
  spend.modelCalls += 1;
  spend.promptTokens += usage.promptTokens;
  spend.completionTokens += usage.completionTokens;
  spend.cost = addCost(spend.cost, cost);
}

function limitNode(limits: RunLimits, source: LimitSource | undefined, parent: LimitNode | undefined): LimitNode {
  return { limits, source: source ?? ((name) => `limits.${name}`), parent, cost: 0, tokens: 0, toolCalls: 0, reservedCost: 0, reservedTokens: 0, startedAt: performance.now() };
}

/** Said of what was spent when other requests are still on their way (their worst cases count too). */
function inFlight(any: boolean): string {
  return any ? " (and calls still on their way may cost up to their worst case)" : "";
}

const LIMIT_KEYS: Record<RunLimitName, keyof RunLimits> = { max_cost: "maxCost", max_tokens: "maxTokens", max_tool_calls: "maxToolCalls", max_duration: "maxDuration" };

function limitOf(code: ErrorCode): RunLimitName {
  return code.slice("limit_".length) as RunLimitName;
}
