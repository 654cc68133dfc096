import { isLllmError } from "../errors.js";
import { closest } from "../util/closest.js";
import { pythonRepr } from "../util/pythonRepr.js";
import { applyCutoff, filterByCutoff } from "./applyCutoff.js";
import { baseUrlVariable } from "./baseUrlVariable.js";
import { placeholdersOf } from "./endpointTemplate.js";
import { fillTemplate } from "./fillTemplate.js";
import { matchEndpoint } from "./matchEndpoint.js";
import { ProxyCache } from "./ProxyCache.js";
import type { ApiRequest, EndpointDefinition, ProxyCallContext, ProxyDefinition } from "./ProxyDefinition.js";
import { ProxyCallError } from "./proxyError.js";
import { sendRequest } from "./sendRequest.js";
import { secrets } from "../util/redact.js";

/** The manager's settings, shared by every proxy it activated. */
export interface ActiveProxyOptions {
  cutoffDate?: string;
  deployMode: boolean;
  /** Responses are cached here; undefined turns caching off. */
  cache?: ProxyCache;
  env: NodeJS.ProcessEnv;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
}

/**
 * A proxy definition put to work with a manager's settings: `call("current/Tokyo", {})` finds the endpoint, checks
 * and completes the params, then computes the answer (`handle`, no base URL) or sends the request, with the key
 * added here on the host, through the disk cache.
 */
export class ActiveProxy {
  constructor(
    readonly definition: ProxyDefinition,
    private readonly options: ActiveProxyOptions,
  ) {
    // Known from the start, so that whatever prints this key later (a handler's error, a log) has it removed.
    if (definition.apiKeyEnv) secrets.add(options.env[definition.apiKeyEnv]);
  }

  get path(): string {
    return this.definition.path;
  }

  /**
   * Call the endpoint named by `subpath` (the CALL_API path after the proxy's name). The answer and any error are
   * redacted of every key in every encoding: both go to the model, the cache and the logs.
   */
  async call(subpath: string, params: Record<string, unknown> = {}): Promise<unknown> {
    try {
      return secrets.redactValue(await this.callUnredacted(subpath, params));
    } catch (error) {
      throw secrets.redactError(error);
    }
  }

  private async callUnredacted(subpath: string, params: Record<string, unknown>): Promise<unknown> {
    const definition = this.definition;
    const called = `${definition.path}/${subpath}`;
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new ProxyCallError("proxy_param_invalid", `params of CALL_API("${called}", ...) must be a dict, e.g. {"city": "London"}`);
    }
    const match = matchEndpoint(definition.endpoints, subpath);
    if (!match) throw this.unknownEndpoint(subpath);
    const { endpoint } = match;
    const label = `${definition.path}/${endpoint.endpoint}`;
    let values: Record<string, unknown> = { ...definition.defaults, ...endpoint.defaults, ...params, ...match.pathParams };
    // Every proxy refuses a missing, empty, `.` or `..` placeholder value, also one that computes its answer; first,
    // so that a bad path value is always that error (seed Step 12's ValueError), never a missing parameter.
    fillTemplate(endpoint.endpoint, values, label);
    this.checkRequired(endpoint, values, label);
    values = applyCutoff(endpoint.params, values, this.options.cutoffDate, label);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const context: ProxyCallContext = {
      proxy: definition.path,
      endpoint,
      ...(this.options.cutoffDate !== undefined ? { cutoffDate: this.options.cutoffDate } : {}),
      deployMode: this.options.deployMode,
      env: this.options.env,
      signal,
    };
    const baseUrl = this.baseUrl();
    if (baseUrl === undefined) {
      // Step 11: no web API behind it; the endpoint's own code is the answer.
      const result = await this.runHandler(endpoint, values, context, label);
      return filterByCutoff(result, endpoint.cutoffField, this.options.cutoffDate);
    }
    if (endpoint.handle) {
      const adjusted = await this.runHandler(endpoint, values, context, label);
      if (adjusted !== undefined) {
        if (adjusted === null || typeof adjusted !== "object" || Array.isArray(adjusted)) {
          throw new ProxyCallError("proxy_handler_failed", `${label}: the proxy's handle() must return the params to send (a dict), got ${pythonRepr(adjusted).slice(0, 40)}`);
        }
        values = adjusted as Record<string, unknown>;
      }
    }
    const request = this.buildRequest(baseUrl, endpoint, values, label);
    const secret = this.apiKey(label, request);
    const key = ProxyCache.keyOf(request);
    const cache = this.options.cache;
    const cached = cache ? await cache.get(definition.path, key) : undefined;
    if (cached) return filterByCutoff(cached.value, endpoint.cutoffField, this.options.cutoffDate);
    const send = (toSend: ApiRequest): Promise<unknown> =>
      sendRequest(toSend, { fetch: this.options.fetch, signal, timeoutMs: this.options.timeoutMs, label: called, ...(secret ? { secret } : {}) });
    const response = secrets.redactValue(definition.callApi ? await definition.callApi(request, { ...context, send }) : await send(request));
    // Only answers are cached: an error thrown above never reaches this line. The entry is the request without its
    // key (`query` and `headers` carry it, and are not stored); the cache redacts what remains all the same.
    if (cache) await cache.set(definition.path, key, { method: request.method, url: request.url, params: request.params, value: response });
    return filterByCutoff(response, endpoint.cutoffField, this.options.cutoffDate);
  }

  /** The base URL, or the `LLLM_PROXY_<PATH>_BASE_URL` override when that variable is set. */
  baseUrl(): string | undefined {
    const override = this.options.env[baseUrlVariable(this.definition.path)];
    return override && override.length > 0 ? override : this.definition.baseUrl;
  }

  private checkRequired(endpoint: EndpointDefinition, values: Record<string, unknown>, label: string): void {
    const missing = endpoint.params.filter((param) => param.required && (values[param.name] === undefined || values[param.name] === null || values[param.name] === ""));
    if (missing.length === 0) return;
    const names = missing.map((param) => `\`${param.name}\``).join(", ");
    const example = Object.fromEntries(missing.map((param) => [param.name, param.example ?? "..."]));
    throw new ProxyCallError(
      "proxy_param_missing",
      `missing required parameter${missing.length > 1 ? "s" : ""} ${names} for ${label}: pass ${missing.length > 1 ? "them" : "it"} in params, e.g. ${JSON.stringify(example)}`,
    );
  }

  private buildRequest(baseUrl: string, endpoint: EndpointDefinition, values: Record<string, unknown>, label: string): ApiRequest {
    const template = endpoint.urlPath ?? endpoint.endpoint;
    const filled = fillTemplate(template, values, label);
    // Placeholder values travel in the path, not again in the query or body.
    const params = { ...values };
    for (const name of new Set([...placeholdersOf(endpoint.endpoint), ...placeholdersOf(template)])) delete params[name];
    const url = filled === "" ? baseUrl : `${baseUrl.replace(/\/+$/, "")}/${filled}`;
    return { method: endpoint.method, url, params, query: {}, headers: { ...this.definition.headers }, endpoint };
  }

  /** Add the key to the request (a header for `*Name`, else a query field) and return it for redaction. */
  private apiKey(label: string, request: ApiRequest): string | undefined {
    const { apiKeyName, apiKeyEnv } = this.definition;
    if (!apiKeyName || !apiKeyEnv) return undefined;
    const value = this.options.env[apiKeyEnv];
    if (!value) {
      throw new ProxyCallError("proxy_key_missing", `${label} needs an API key, and the environment variable ${apiKeyEnv} is not set: the user must set ${apiKeyEnv} before this proxy can be used`);
    }
    if (apiKeyName.startsWith("*")) request.headers[apiKeyName.slice(1)] = value;
    else {
      // The key is the host's: a param of the same name from the agent's code must not stand in for it.
      delete request.params[apiKeyName];
      request.query[apiKeyName] = value;
    }
    return value;
  }

  private async runHandler(endpoint: EndpointDefinition, values: Record<string, unknown>, context: ProxyCallContext, label: string): Promise<unknown> {
    try {
      return await endpoint.handle!({ ...values }, context);
    } catch (error) {
      if (isLllmError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new ProxyCallError("proxy_handler_failed", `${label} failed: ${message}`, { cause: error });
    }
  }

  private unknownEndpoint(subpath: string): ProxyCallError {
    const templates = this.definition.endpoints.map((endpoint) => endpoint.endpoint);
    const near = closest(subpath, templates, templates.length);
    const ordered = [...near, ...templates.filter((template) => !near.includes(template))];
    return new ProxyCallError(
      "proxy_endpoint_unknown",
      `proxy \`${this.definition.path}\` has no endpoint \`${subpath}\`. Its endpoints: ${ordered.join(", ")}. Call CALL_API("${this.definition.path}/<endpoint>", params), filling any {placeholder} in the path or in params`,
    );
  }
}
