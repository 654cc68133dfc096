/**
 * The shapes every proxy takes once loaded, whether it was written as a YAML file (`proxies/*.yaml`), in TypeScript
 * with `proxy({...})` (`proxies/*.ts`), or ships with lllm (`src/proxies/builtin/`). A manager only ever sees these.
 */

/** JSON Schema type names; the documentation shows them as Python names (`str`, `int`, …), see `pythonTypeName`. */
export type ParamType = "string" | "integer" | "number" | "boolean" | "array" | "object";

/**
 * How a date parameter follows the manager's `cutoffDate`:
 * - `end`: defaults to the cutoff date when absent, and is clamped at it when later (`observation_end`, `to`);
 * - `clamp`: only clamped at the cutoff date when later (`observation_start`, `from`), so a window never inverts;
 * - `range`: a `START END` pair in one value (Google Trends' `time`): absent means the year up to the cutoff,
 *   `all` and `today 3-m` style windows end at the cutoff, and a window ending later is moved back to end there.
 * Without a cutoff date nothing changes.
 */
export type CutoffMode = "end" | "clamp" | "range";

/** One parameter of an endpoint, from `"city*": [string, London]`. */
export interface ParamDefinition {
  /** The name sent to the API, without the `*`. */
  name: string;
  /** Written with a trailing `*`: the call fails before anything is sent when it is missing. */
  required: boolean;
  type: ParamType;
  /** Shown in the documentation as `e.g. …`; `undefined` when the definition gives none. */
  example?: unknown;
  cutoff?: CutoffMode;
}

/** What a call carries besides its parameters: the manager's settings, shared by every proxy it activated. */
export interface ProxyCallContext {
  /** The proxy's `path`. */
  proxy: string;
  endpoint: EndpointDefinition;
  /** `YYYY-MM-DD`, or undefined: data after this date must not be returned. */
  cutoffDate?: string;
  deployMode: boolean;
  /** The environment keys are read from (the manager's `env`, default `process.env`). */
  env: NodeJS.ProcessEnv;
  /** Aborted when the call times out. */
  signal?: AbortSignal;
}

/**
 * An endpoint's own code (Step 11 and 12 of the seed): without a `baseUrl` it computes the answer; with one it
 * returns the parameters to send (it may adjust or validate them; returning nothing sends `params` as mutated).
 */
export type EndpointHandler = (params: Record<string, unknown>, context: ProxyCallContext) => unknown | Promise<unknown>;

/** One HTTP request a proxy is about to send. The API key is already in `headers` or `query`; never in `params`. */
export interface ApiRequest {
  method: "GET" | "POST";
  /** base URL + the filled endpoint path, without a query string. */
  url: string;
  /** Sent as the query string (GET) or as the JSON body (POST). */
  params: Record<string, unknown>;
  /** Query-string fields sent with every method: the API key when it is a query parameter. */
  query: Record<string, string>;
  headers: Record<string, string>;
  endpoint: EndpointDefinition;
}

/**
 * Replaces the HTTP request of a proxy (the seed's `_call_api`): for APIs that need extra request fields or whose
 * responses need post-processing. `send` is the default request, so an override can wrap it. Its result is cached
 * like a response.
 */
export type CallApiHook = (request: ApiRequest, context: ProxyCallContext & { send: (request: ApiRequest) => Promise<unknown> }) => unknown | Promise<unknown>;

/** One callable endpoint of a proxy. */
export interface EndpointDefinition {
  category: string;
  /** The path the agent calls after the proxy's path: slashes, hyphens and `{placeholders}`, e.g. `current/{city}`. */
  endpoint: string;
  method: "GET" | "POST";
  description: string;
  params: ParamDefinition[];
  /** An example response, for authors and for `lllm proxy docs --json`. */
  response?: unknown;
  /** Parameters set when the call leaves them out (over the proxy's own `defaults`). */
  defaults: Record<string, unknown>;
  /** The URL path under the base URL when it differs from `endpoint` (may be empty, or hold the same placeholders). */
  urlPath?: string;
  /** With a cutoff date, items of a list response whose field holds a later date are dropped (e.g. `date`). */
  cutoffField?: string;
  handle?: EndpointHandler;
}

/** Where a definition came from, for `lllm proxy list` and for messages. */
export interface ProxySource {
  file: string;
  kind: "yaml" | "code" | "builtin";
  /** The package it was found in; absent for built-ins and definitions made in code. */
  packageName?: string;
}

/** A proxy: an API surface the agent reads about with `query_api_doc` and calls with `CALL_API(path, params)`. */
export interface ProxyDefinition {
  /** The name it is activated by and the first segment of every `CALL_API` path. */
  path: string;
  /** The display name in the documentation heading. */
  name: string;
  description: string;
  /** Absent: every endpoint computes its answer with `handle`. */
  baseUrl?: string;
  /** Query parameter that carries the key; with a leading `*` a header of that name (`*x-api-key`). */
  apiKeyName?: string;
  /** The environment variable holding the key; read only when the proxy is called. */
  apiKeyEnv?: string;
  /** Sent with every request. */
  headers: Record<string, string>;
  /** Parameters set on every endpoint when the call leaves them out. */
  defaults: Record<string, unknown>;
  endpoints: EndpointDefinition[];
  callApi?: CallApiHook;
  source?: ProxySource;
}
