import type { AgentEvent } from "../agent/index.js";
import type { PriceTable } from "../providers/PriceTable.js";
import { formatCount } from "../util/formatCount.js";
import { addCost } from "../util/roundCost.js";

/** Token counts of a run, as the providers reported them (cached prompt and reasoning tokens are parts of the totals). */
export interface TokenTotals {
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
}

/** What a run spent: its model calls, their tokens, and their cost (null when one call's model has no price). */
export interface RunSpend {
  llmCalls: number;
  usage: TokenTotals;
  cost: number | null;
}

/** Nothing spent yet. */
export function noSpend(): RunSpend {
  return { llmCalls: 0, usage: { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, reasoningTokens: 0 }, cost: 0 };
}

/** `a` and `b` together, or `a` less `b` (`sign` -1: a part of it). */
export function combineSpend(a: RunSpend, b: RunSpend, sign: 1 | -1 = 1): RunSpend {
  const usage = { ...a.usage };
  for (const key of Object.keys(usage) as Array<keyof TokenTotals>) usage[key] += sign * b.usage[key];
  return { llmCalls: a.llmCalls + sign * b.llmCalls, usage, cost: addCost(a.cost, b.cost === null ? null : sign * b.cost) };
}

/**
 * Tokens and cost of a run, summed from its `model_reply` events. The cost is `null` as soon as one call's model
 * has no known price: a partial sum would read as the whole cost.
 */
export class RunTally {
  readonly usage: TokenTotals = { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, reasoningTokens: 0 };
  llmCalls = 0;
  cost: number | null = 0;
  readonly models = new Set<string>();
  readonly #prices: PriceTable;

  constructor(prices: PriceTable) {
    this.#prices = prices;
  }

  /** Count a model reply; returns that call's cost (null when unknown). */
  add(event: Extract<AgentEvent, { type: "model_reply" }>): number | null {
    const { usage } = event;
    this.usage.promptTokens += usage.promptTokens;
    this.usage.cachedPromptTokens += usage.cachedPromptTokens ?? 0;
    this.usage.completionTokens += usage.completionTokens;
    this.usage.reasoningTokens += usage.reasoningTokens ?? 0;
    this.llmCalls += 1;
    if (event.model !== undefined) this.models.add(event.model);
    const cost = event.model === undefined ? null : this.#prices.costOf(event.model, usage);
    this.cost = addCost(this.cost, cost);
    return cost;
  }

  /** What it counted so far. */
  get spend(): RunSpend {
    return { llmCalls: this.llmCalls, usage: { ...this.usage }, cost: this.cost };
  }

  /** `3 model calls, 1,200 + 85 tokens (1,000 cached), $0.0012` for the end of a --verbose run. */
  summary(durationMs: number): string {
    const { usage } = this;
    const parts = [`${this.llmCalls} model call${this.llmCalls === 1 ? "" : "s"}`];
    let tokens = `${formatCount(usage.promptTokens)} + ${formatCount(usage.completionTokens)} tokens`;
    const details = [usage.cachedPromptTokens > 0 ? `${formatCount(usage.cachedPromptTokens)} cached` : "", usage.reasoningTokens > 0 ? `${formatCount(usage.reasoningTokens)} reasoning` : ""].filter(Boolean);
    if (details.length > 0) tokens += ` (${details.join(", ")})`;
    parts.push(tokens, this.cost === null ? "cost unknown" : formatCost(this.cost), `${(durationMs / 1000).toFixed(1)} s`);
    return parts.join(", ");
  }
}

/** Dollars with enough digits to see a cheap call, never in exponent notation: `$0.0012`, `$1.25`, `<$0.0001`. */
export function formatCost(cost: number | null): string {
  if (cost === null) return "-";
  if (cost === 0) return "$0";
  if (cost < 0.0001) return "<$0.0001";
  // 0.996 rounds to two significant digits as "1.0": cents from there on.
  return cost >= 0.995 ? `$${cost.toFixed(2)}` : `$${cost.toPrecision(2)}`;
}
