import type { CallApiHook, CutoffMode, EndpointHandler } from "./ProxyDefinition.js";
import type { ParamTypeName } from "./paramType.js";

/**
 * A parameter as written: `[type, example]` (the seed's tuple) or `{ type, example, cutoff }` when it follows the
 * cutoff date. Types are JSON Schema names or Python names (`"string"` or `"str"`).
 */
export type ParamSpec = readonly [type: ParamTypeName, example?: unknown] | { type: ParamTypeName; example?: unknown; cutoff?: CutoffMode };

/** One endpoint of `proxy({...})`. */
export interface EndpointSpec {
  category: string;
  /** The path the agent calls after the proxy's path, e.g. `current/{city}`. */
  endpoint: string;
  /** Default `GET`; `POST` sends the parameters as a JSON body. */
  method?: "GET" | "POST";
  description: string;
  /** Keyed by name; a trailing `*` marks a required parameter: `{ "city*": ["string", "London"] }`. */
  params?: Record<string, ParamSpec>;
  /** An example response. */
  response?: unknown;
  /** Parameters set when the call leaves them out. */
  defaults?: Record<string, unknown>;
  /** The URL path under `baseUrl` when it differs from `endpoint`. */
  urlPath?: string;
  /** With a cutoff date, drop items of a list response whose field is a later date. */
  cutoffField?: string;
  /** Without `baseUrl`: computes the answer. With it: returns the parameters to send. */
  handle?: EndpointHandler;
}

/** What `proxy({...})` takes: the TypeScript form of the seed's `@ProxyRegistrator` class (Steps 11–12). */
export interface ProxySpec {
  /** The name to activate and the first segment of every `CALL_API` path. */
  path: string;
  name: string;
  description: string;
  baseUrl?: string;
  /** Query parameter carrying the key, or `*Header-Name` to send it as a header. */
  apiKeyName?: string;
  /** The environment variable holding the key. */
  apiKeyEnv?: string;
  headers?: Record<string, string>;
  defaults?: Record<string, unknown>;
  endpoints: EndpointSpec[];
  /** Replaces the HTTP request (the seed's `_call_api` override). */
  callApi?: CallApiHook;
}
