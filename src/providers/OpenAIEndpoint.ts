import type OpenAI from "openai";
import type { RetryNotice, RetryPolicy } from "./RetryPolicy.js";
import { fetchWithinOrigin } from "../util/fetchWithinOrigin.js";
import { nodeHttpFetch, type HttpTransport } from "../util/nodeHttpFetch.js";

/** Where an OpenAI-compatible server is and how to authenticate to it. */
export interface OpenAIEndpoint {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseURL: string;
  /** The bearer token; absent for local servers that need none. */
  apiKey?: string;
  /** The environment variable the key came from (or should come from), named in auth errors. */
  apiKeyEnv?: string;
  /** Where the API root was set (`invoker_config.base_url`, `OPENAI_BASE_URL`), named in connection errors; absent for the provider's default. */
  baseURLFrom?: string;
  /** OpenAI organization / project ids (`OpenAI-Organization`, `OpenAI-Project` headers). */
  organization?: string;
  project?: string;
}

/** Options shared by the OpenAI chat-completions and Responses models. */
export interface OpenAIModelOptions {
  /** The model name as configured (`ollama/llama3`), reported as `Model.name` and in messages. */
  name: string;
  /** The model name sent to the server (`llama3`); default `name`. */
  model?: string;
  endpoint: OpenAIEndpoint;
  /** Overrides of the default retry policy (4 retries, 500 ms doubling, 30 s cap). */
  retry?: Partial<RetryPolicy>;
  /** How long one attempt may go without progress (headers, or the next streamed chunk). Default 120 s. */
  timeoutMs?: number;
  /** Told before each retry (attempt, cause, wait), so that a caller can show it. */
  onRetry?: (notice: RetryNotice) => void;
  /** The proxies to go through and the largest answer read (default: direct, 64 MB). */
  transport?: HttpTransport;
}

export const DEFAULT_TIMEOUT_MS = 120_000;

/** Sent when a server needs no key: the SDK insists on one, and such servers ignore the header. */
export const NO_KEY = "no-key";

type OpenAIModule = typeof import("openai");
let openAIModule: Promise<OpenAIModule> | undefined;

/** The `openai` SDK, imported on first use: loading it costs start-up time that `lllm --help` should not pay. */
export function loadOpenAI(): Promise<OpenAIModule> {
  openAIModule ??= import("openai");
  return openAIModule;
}

/**
 * An SDK client for the endpoint. Everything is passed explicitly so that the SDK never reads `OPENAI_*`
 * variables from `process.env` behind our back (the caller's `env` is the only source), and the SDK's own
 * retries are off: `requestWithRetries` owns the policy.
 */
export async function createOpenAIClient(endpoint: OpenAIEndpoint, timeoutMs: number, transport?: HttpTransport): Promise<OpenAI> {
  const { default: OpenAIClient } = await loadOpenAI();
  return new OpenAIClient({
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey ?? NO_KEY,
    organization: endpoint.organization ?? null,
    project: endpoint.project ?? null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    // The SDK logs unparsable stream chunks raw to the console; lllm reports bad answers itself, redacted.
    logLevel: "off",
    // The bearer key must not follow a redirect to another host (fetch drops only Authorization, not the rest).
    // Over node:http rather than Node's fetch: a third less CPU per call, which a batch of many items notices.
    fetch: modelFetch(transport),
  });
}

/**
 * The `fetch` of every model client: over `nodeHttpFetch` (keep-alive pools, the environment's proxies, a cap on
 * the answer's size), following redirects within the origin only, so a key never goes to another host.
 */
export function modelFetch(transport: HttpTransport | undefined): (url: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const send = (target: string | URL | Request, init?: RequestInit): Promise<Response> => nodeHttpFetch(target, init, transport);
  return (url, init) => fetchWithinOrigin(send, url, init);
}
