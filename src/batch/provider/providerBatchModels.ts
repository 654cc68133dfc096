import { createHash } from "node:crypto";
import type { AgentConfig } from "../../config/index.js";
import type { Model, ModelRequest, ModelResponse } from "../../providers/Model.js";
import { modelSetup, type ModelSetup } from "../../providers/createModel.js";
import { PriceTable, BATCH_PRICE_SHARE, type ModelPrice } from "../../providers/PriceTable.js";
import type { BatchApi, BatchTurn } from "./BatchApi.js";
import { OpenAIBatchApi } from "./openAIBatchApi.js";
import { AnthropicBatchApi } from "./anthropicBatchApi.js";
import { GeminiBatchApi } from "./geminiBatchApi.js";
import type { BatchGroup, ProviderBatchRunner } from "./ProviderBatchRunner.js";
import { InterruptedError } from "../../errors.js";
import type { FunctionTool } from "../../tools/index.js";
import { linkedSignal } from "../../util/linkedSignal.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { ToolJournal, type ToolResults } from "../../store/journal/ToolJournal.js";
import { EMPTY_HISTORY, type ItemHistory } from "./ItemHistory.js";

/** What an attempt reads from the batch's job store (`BatchJobStore`) and keeps there. */
export interface ItemStore extends ToolResults {
  /** See `BatchJobStore.startedEmpty`. */
  readonly startedEmpty: boolean;
  historyOf(itemKey: string): ItemHistory;
  /** Write the tool outcomes waiting: the item's next model request depends on them. */
  flushToolResults(): void;
}

/** What a job's settings are stored as: enough to build the endpoint again (no key: keys come from the environment). */
interface StoredConfig {
  model_name: string;
  api_type?: string;
  invoker_config?: { base_url?: string; api_key_env?: string };
}

export interface BatchGroupFactoryOptions {
  env?: NodeJS.ProcessEnv;
  prices?: Record<string, ModelPrice>;
  maxReplyBytes?: number;
}

/**
 * The batch groups of agents' model settings, built once per settings: undefined for a model whose provider has no
 * batch API (it runs live). A missing key throws the `ConfigError` of `createModel`.
 */
export class BatchGroups {
  readonly #groups = new Map<string, BatchGroup | null>();
  readonly #options: BatchGroupFactoryOptions;

  constructor(options: BatchGroupFactoryOptions) {
    this.#options = options;
  }

  /** The group of an agent's settings, or undefined when its provider has no batch API. */
  of(config: Pick<AgentConfig, "model_name" | "api_type" | "invoker_config">): BatchGroup | undefined {
    const stored: StoredConfig = { model_name: config.model_name, ...(config.api_type ? { api_type: config.api_type } : {}), ...(config.invoker_config ? { invoker_config: endpointKeys(config.invoker_config) } : {}) };
    return this.fromStored(JSON.stringify(stored));
  }

  /** The group of a job's stored settings (`--status`, `--cancel`, a resumed run). */
  fromStored(json: string): BatchGroup | undefined {
    const known = this.#groups.get(json);
    if (known !== undefined) return known ?? undefined;
    const group = this.#build(json);
    this.#groups.set(json, group ?? null);
    return group;
  }

  #build(json: string): BatchGroup | undefined {
    const config = JSON.parse(json) as StoredConfig;
    if (config.model_name.startsWith("scripted:")) return undefined;
    const setup = modelSetup({
      model: config.model_name,
      ...(config.api_type === "completion" || config.api_type === "response" ? { apiType: config.api_type } : {}),
      ...(config.invoker_config ? { invokerConfig: config.invoker_config } : {}),
      ...(this.#options.env ? { env: this.#options.env } : {}),
      ...(this.#options.maxReplyBytes !== undefined ? { maxReplyBytes: this.#options.maxReplyBytes } : {}),
    });
    const api = batchApiOf(setup, config.api_type);
    if (!api) return undefined;
    const table = PriceTable.load(this.#options.prices);
    const price = table.priceOf(config.model_name);
    return {
      config: json,
      api,
      // About 4 bytes of JSON a prompt token: what a request will cost at least, before its answer says.
      estimate: (bytes) => (price ? ((bytes / 4) * (price.batch_input ?? price.input * BATCH_PRICE_SHARE)) / 1_000_000 : 0),
      costOf: (usage) => table.costOf(config.model_name, { ...usage, batch: true }) ?? 0,
    };
  }
}

/** The batch API of a model's endpoint: OpenAI's chat completions (OpenAI itself or a server given as its base URL), Anthropic's, Gemini's. */
function batchApiOf(setup: ModelSetup, apiType: string | undefined): BatchApi | undefined {
  if (setup.wire === "anthropic") return new AnthropicBatchApi(setup.modelOptions);
  if (setup.wire === "gemini") return new GeminiBatchApi(setup.modelOptions);
  if (setup.prefix === "openai" && apiType !== "response") return new OpenAIBatchApi(setup.modelOptions);
  return undefined;
}

/** invoker_config without what cannot be JSON (it is stored). */
/**
 * The `invoker_config` keys that choose where requests go (the only ones `createModel` reads). The rest (litellm's
 * knobs, and an `api_key` a litellm-style tactic may carry) is never written to the run store with the job.
 */
function endpointKeys(config: Record<string, unknown>): { base_url?: string; api_key_env?: string } {
  return {
    ...(typeof config["base_url"] === "string" ? { base_url: config["base_url"] } : {}),
    ...(typeof config["api_key_env"] === "string" ? { api_key_env: config["api_key_env"] } : {}),
  };
}

export interface ItemModelsOptions {
  runner: ProviderBatchRunner;
  groups: BatchGroups;
  /** The model of settings without a batch API: the live one. */
  live: (config: AgentConfig) => Model;
}

/** The models and tools of one run of an item that waits for its answers in memory. */
export interface ItemModels {
  createModel: (config: AgentConfig) => Model;
  /** Keeps the results of the item's tool calls, so that the item run again after a kill replays them (see `ToolJournal`). */
  wrapTool: (tool: FunctionTool, agent: string) => FunctionTool;
}

/**
 * One item's run that waits in memory: each agent's model sends its requests to the batch runner, named by what they
 * send (see `requestIds`), and its tool calls are journaled in the job store, so that the item run again after a kill
 * finds its answered turns again and runs no call twice (a call the kill cut short runs again only when its tool says
 * that is safe, or with `rerunUnknown`), as a parked item's attempt does.
 */
export function itemModels(itemId: string, options: ItemModelsOptions & { store: ItemStore; rerunUnknown?: boolean }): ItemModels {
  const key = itemKey(itemId);
  const idOf = requestIds(key);
  const journal = new ToolJournal({ results: options.store, scope: key, ...(options.store.startedEmpty ? { kept: EMPTY_HISTORY.tools } : {}), ...(options.rerunUnknown ? { rerunUnknown: () => true } : {}) });
  return {
    wrapTool: (tool, agent) => journal.wrap(tool, agent),
    createModel: turnModels(options, (group, batchTurn, request) => {
      // The request carries the results of the calls before it: they are on disk first.
      options.store.flushToolResults();
      return options.runner.ask(group, idOf(batchTurn.body), key, batchTurn, request.signal);
    }),
  };
}

/**
 * The custom ids of an item's requests: `<item key>-<digest of the body>-<occurrence>`. Not numbered in the order the
 * item makes them: agents that run side by side (agents used as tools, called in one answer) ask in the order their
 * tools happen to end, and a run again after a kill, whose tools are answered from the journal at once, may ask in
 * another; a number would then give one agent the answer to another's request. A request that sends the same body
 * as an earlier one of the item gets the next occurrence: identical requests may take each other's answers, which
 * answer the same question.
 */
function requestIds(key: string): (body: unknown) => string {
  const seen = new Map<string, number>();
  return (body) => {
    const digest = createHash("sha256").update(JSON.stringify(withoutAnswerCap(body))).digest("hex").slice(0, 16);
    const occurrence = (seen.get(digest) ?? 0) + 1;
    seen.set(digest, occurrence);
    return `${key}-${digest}-${occurrence}`;
  };
}

/**
 * The `createModel` of an item's agents: a model with a batch API gets each request answered by `answer` (as the
 * item's next turn, through the agent's own dialog: what its live model would keep between its calls, thinking
 * blocks and call parts, rebuilt in order by an item run again); one without runs live.
 */
function turnModels(options: ItemModelsOptions, answer: (group: BatchGroup, turn: BatchTurn, request: ModelRequest) => Promise<ModelResponse>): (config: AgentConfig) => Model {
  return (config) => {
    const group = options.groups.of(config);
    if (!group) return options.live(config);
    const dialog = group.api.dialog();
    return {
      name: config.model_name,
      generate: async (request) => {
        const response = await answer(group, dialog.turn(request), request);
        if (request.onText && response.message.content) request.onText(response.message.content);
        return response;
      },
    };
  };
}

/** One run of an item, from its start, that stops (parks) at the first request without an answer yet. */
export interface ItemAttempt {
  createModel: (config: AgentConfig) => Model;
  /** Keeps the results of the item's tool calls, so that a later attempt replays them (see `ToolJournal`). */
  wrapTool: (tool: FunctionTool, agent: string) => FunctionTool;
  /** The run's signal: the batch's cancel, and the park. */
  signal: AbortSignal;
  /** The attempt stopped because a request waits for a provider batch job (not a failure: the item runs again). */
  readonly parked: boolean;
  /** Once parked: what the item's answered turns cost, kept with the parked item (see `ProviderBatchRunner.itemParks`). */
  readonly parkedCost: number;
  /** Unhook the signal (the attempt is over). */
  dispose(): void;
}

/**
 * An attempt of an item whose requests are parked, not awaited (`ProviderBatchRunner.park`): its answered requests
 * are answered at once, in order, and its tool calls replayed; at the first request without an answer the attempt
 * aborts its run, which ends, and keeps nothing in memory but the item. The runner says when the answer came
 * (`onReady`); the item then runs again from its start.
 */
export function itemAttempt(itemId: string, options: ItemModelsOptions & { store: ItemStore; history?: ItemHistory; cancel: AbortSignal; parkedCost?: number; rerunUnknown?: boolean }): ItemAttempt {
  const key = itemKey(itemId);
  // Read once (or with the item, when it was parked): an item run again for its third round replays two answered
  // turns and two calls without a query for each.
  const history = options.history ?? (options.store.startedEmpty ? EMPTY_HISTORY : options.store.historyOf(key));
  const idOf = requestIds(key);
  const park = new AbortController();
  const linked = linkedSignal([options.cancel, park.signal]);
  const journal = new ToolJournal({ results: options.store, scope: key, kept: history.tools, ...(options.rerunUnknown ? { rerunUnknown: () => true } : {}) });
  options.runner.itemRestarts(key, options.parkedCost ?? 0);
  let parkedCost = 0;
  const stop = (reason: InterruptedError): void => {
    parkedCost = options.runner.itemParks(key);
    park.abort(reason);
  };
  return {
    signal: linked.signal,
    get parked() {
      return park.signal.aborted;
    },
    get parkedCost() {
      return parkedCost;
    },
    dispose: linked.dispose,
    wrapTool: (tool, agent) => journal.wrap(tool, agent),
    createModel: turnModels(options, async (group, batchTurn) => {
      // The request carries the results of the calls before it: they are on disk first.
      options.store.flushToolResults();
      let response: ModelResponse | undefined;
      try {
        const customId = idOf(batchTurn.body);
        response = options.runner.park(group, customId, key, batchTurn, history.requests.get(customId));
      } catch (error) {
        // The batch stopped (Ctrl-C): the item is not failed but left, as a parked one, for a rerun.
        if (error instanceof InterruptedError) stop(error);
        throw error;
      }
      if (response) return response;
      const reason = new InterruptedError("interrupted", "the item waits for its provider batch job");
      stop(reason);
      throw reason;
    }),
  };
}

/**
 * A body without its cap on the answer's length, for its digest: a run's `max_cost` or `max_tokens` lowers the cap by
 * what the requests in flight reserve at that moment, which differs when the item runs again (OpenAI's `max_tokens` or
 * `max_completion_tokens`; Anthropic's `max_tokens`, and its thinking budget fitted under it; Gemini's
 * `generationConfig.maxOutputTokens`).
 */
function withoutAnswerCap(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  const { max_tokens: _cap, max_completion_tokens: _completionCap, thinking: _fitted, generationConfig, ...rest } = body;
  if (!isPlainObject(generationConfig)) return generationConfig === undefined ? rest : { ...rest, generationConfig };
  const { maxOutputTokens: _gemini, ...config } = generationConfig;
  return { ...rest, generationConfig: config };
}

/** 24 hex digits of the item's id: custom ids must be short and plain (Anthropic: `[a-zA-Z0-9_-]{1,64}`). */
export function itemKey(itemId: string): string {
  return `i${createHash("sha256").update(itemId).digest("hex").slice(0, 24)}`;
}
