import type { AgentEvent } from "../agent/index.js";
import type { PriceTable } from "./PriceTable.js";
import type { StoredUsage } from "./RunRecord.js";

/**
 * Tokens and cost of a run, summed from its `model_reply` events. The cost is `null` as soon as one call's model
 * has no known price: a partial sum would read as the whole cost.
 */
export class RunTally {
  readonly usage: StoredUsage = { prompt_tokens: 0, cached_prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 };
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
    this.usage.prompt_tokens += usage.promptTokens;
    this.usage.cached_prompt_tokens += usage.cachedPromptTokens ?? 0;
    this.usage.completion_tokens += usage.completionTokens;
    this.usage.reasoning_tokens += usage.reasoningTokens ?? 0;
    this.llmCalls += 1;
    if (event.model !== undefined) this.models.add(event.model);
    const cost = event.model === undefined ? null : this.#prices.costOf(event.model, usage);
    this.cost = this.cost === null || cost === null ? null : this.cost + cost;
    return cost;
  }

  /** `3 model calls, 1,200 + 85 tokens (1,000 cached), $0.0012` for the end of a --verbose run. */
  summary(durationMs: number): string {
    const { usage } = this;
    const parts = [`${this.llmCalls} model call${this.llmCalls === 1 ? "" : "s"}`];
    let tokens = `${usage.prompt_tokens.toLocaleString("en-US")} + ${usage.completion_tokens.toLocaleString("en-US")} tokens`;
    const details = [usage.cached_prompt_tokens > 0 ? `${usage.cached_prompt_tokens.toLocaleString("en-US")} cached` : "", usage.reasoning_tokens > 0 ? `${usage.reasoning_tokens.toLocaleString("en-US")} reasoning` : ""].filter(Boolean);
    if (details.length > 0) tokens += ` (${details.join(", ")})`;
    parts.push(tokens, this.cost === null ? "cost unknown" : formatCost(this.cost), `${(durationMs / 1000).toFixed(1)} s`);
    return parts.join(", ");
  }
}

/** Dollars with enough digits to see a cheap call: `$0.0012`, `$1.25`. */
export function formatCost(cost: number | null): string {
  if (cost === null) return "-";
  if (cost === 0) return "$0";
  return cost >= 1 ? `$${cost.toFixed(2)}` : `$${cost.toPrecision(2)}`;
}
