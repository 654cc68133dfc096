import { readFileSync } from "node:fs";
import { modelRoute, providerOfModel } from "./modelCatalogue.js";
import { roundCost } from "../util/roundCost.js";

/**
 * Prices of one model, in US dollars per million tokens. `cached_input` (a prompt token read from the provider's
 * cache) defaults to `input`; `cache_write` (one written to it) defaults to 1.25 times `input`.
 */
export interface ModelPrice {
  input: number;
  cached_input?: number;
  cache_write?: number;
  output: number;
  /** Through the provider's batch API (`lllm batch --provider-batch`): default half of `input` and `output`. */
  batch_input?: number;
  batch_output?: number;
}

const SCRIPTED_PRICE: ModelPrice = Object.freeze({ input: 0, output: 0 });

/** What a call through a provider's batch API costs, as a share of the live price, when the table gives none. */
export const BATCH_PRICE_SHARE = 0.5;

let shipped: { as_of: string; models: Record<string, ModelPrice> } | undefined;
/** Tables already built, by the overrides they were built with (a table never changes once built). */
const loaded = new WeakMap<object, PriceTable>();
const NO_OVERRIDES = {};

/**
 * Token counts of one model call, as the provider reported them. Cached tokens (read from the provider's prompt
 * cache) and cache-write tokens (written to it) are parts of the prompt tokens.
 */
export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens?: number;
  cacheWritePromptTokens?: number;
  /** The call went through the provider's batch API: billed at the batch price. */
  batch?: boolean;
}

/**
 * What a prompt token written to the provider's cache costs, as a multiple of the input price, when the table gives
 * no `cache_write` price. Only Anthropic reports such tokens, and bills them at 1.25 times the input price for its
 * 5-minute cache (the `ephemeral` breakpoints lllm sets); other providers write their caches at no extra cost and
 * report none.
 */
const CACHE_WRITE_MULTIPLIER = 1.25;

/**
 * The price table shipped in `prices.json` (dated), with the project's `prices:` over it. A model it does not know
 * costs `null`: an unknown cost is never reported as 0.
 */
export class PriceTable {
  readonly asOf: string;
  readonly #prices: Map<string, ModelPrice>;
  /** The names the project's `prices:` gives: what the user says a model costs, wherever it is served. */
  readonly #own: Set<string>;
  /** Lookups by configured name (a run asks for the same few models on every call). */
  readonly #found = new Map<string, ModelPrice | undefined>();

  /** `own`: the names of `prices` that are the project's (`prices:`), not the shipped table's. */
  constructor(prices: Record<string, ModelPrice>, asOf: string, own: Iterable<string> = []) {
    this.#prices = new Map(Object.entries(prices));
    this.asOf = asOf;
    this.#own = new Set(own);
  }

  /** The shipped table, with `overrides` (the project settings' `prices:`) replacing or adding models. */
  static load(overrides?: Record<string, ModelPrice>): PriceTable {
    // Read and built once per process and settings: a batch starts a run (and a tally) per item.
    const key = overrides ?? NO_OVERRIDES;
    const known = loaded.get(key);
    if (known) return known;
    // The path goes through the folder's name: it holds from dist/<folder>/ and from the bundle in dist/bundle/ alike.
    const data = (shipped ??= JSON.parse(readFileSync(new URL("../providers/prices.json", import.meta.url), "utf8")) as { as_of: string; models: Record<string, ModelPrice> });
    const table = new PriceTable({ ...data.models, ...overrides }, data.as_of, Object.keys(overrides ?? {}));
    loaded.set(key, table);
    return table;
  }

  /**
   * The price of a model name as configured: `openai/gpt-4o` and `gpt-4o-2024-08-06` find `gpt-4o`; a name with
   * another suffix (`gpt-4o-audio-preview`) is a different model and finds nothing.
   *
   * A request is priced only by the provider it goes to: the shipped price of a model is its maker's, so it is not
   * used for a name routed elsewhere (`groq/gpt-4o`, `claude-sonnet-4-5` without its prefix, which goes to OpenAI's
   * route) nor for a name whose first segment is no provider prefix (`anthropc/claude-…`, sent whole to an
   * OpenAI-compatible server). The project's `prices:` say what a name costs wherever it goes: the name as written
   * first, then without its prefix.
   */
  priceOf(model: string): ModelPrice | undefined {
    if (this.#found.has(model)) return this.#found.get(model);
    const price = this.#lookUp(model);
    this.#found.set(model, price);
    return price;
  }

  #lookUp(model: string): ModelPrice | undefined {
    // A scripted model calls no provider: it costs nothing, which is a known price (0), not an unknown one.
    if (model.startsWith("scripted:")) return SCRIPTED_PRICE;
    if (this.#own.has(model)) return this.#prices.get(model);
    const route = modelRoute(model);
    if (!route) return undefined;
    const { bare } = route;
    let key: string | undefined = this.#prices.has(bare) ? bare : undefined;
    if (key === undefined) {
      for (const name of this.#prices.keys()) {
        if (bare.startsWith(name) && /^-(\d|latest)/.test(bare.slice(name.length)) && (key === undefined || name.length > key.length)) key = name;
      }
    }
    if (key === undefined) return undefined;
    const maker = this.#own.has(key) ? undefined : providerOfModel(key);
    return maker === undefined || maker === route.route.prefix ? this.#prices.get(key) : undefined;
  }

  /** Every model the table prices, in its order (the shipped table first, then the project's additions). */
  names(): string[] {
    return [...this.#prices.keys()];
  }

  /** The cost in dollars of one call, or `null` when the model's price is unknown. */
  costOf(model: string, tokens: TokenCounts): number | null {
    const price = this.priceOf(model);
    if (!price) return null;
    const cached = Math.min(tokens.cachedPromptTokens ?? 0, tokens.promptTokens);
    const written = Math.min(tokens.cacheWritePromptTokens ?? 0, tokens.promptTokens - cached);
    const fresh = tokens.promptTokens - cached - written;
    if (tokens.batch) {
      // Batch discounts apply to every input token alike (cache reads and writes included: the providers bill them
      // at their own discounted rates, which the table's batch prices stand for).
      const input = price.batch_input ?? price.input * BATCH_PRICE_SHARE;
      const output = price.batch_output ?? price.output * BATCH_PRICE_SHARE;
      return roundCost((tokens.promptTokens * input + tokens.completionTokens * output) / 1_000_000);
    }
    return roundCost((fresh * price.input + cached * (price.cached_input ?? price.input) + written * (price.cache_write ?? price.input * CACHE_WRITE_MULTIPLIER) + tokens.completionTokens * price.output) / 1_000_000);
  }
}
