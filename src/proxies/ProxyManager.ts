import path from "node:path";
import type { ProxyConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import { lllmHome } from "../config/lllmHome.js";
import { didYouMean } from "../util/closest.js";
import { ActiveProxy } from "./ActiveProxy.js";
import { formatApiDocs } from "./formatApiDocs.js";
import { indexByPath } from "./indexByPath.js";
import { ProxyCache, type CacheStats } from "./ProxyCache.js";
import type { ProxyDefinition } from "./ProxyDefinition.js";
import { ProxyCallError } from "./proxyError.js";

/** Per-request time limit unless `timeoutMs` says otherwise. */
export const DEFAULT_PROXY_TIMEOUT_MS = 30_000;

export interface ProxyManagerOptions {
  /** Every proxy that may be activated (see `loadProxies`). */
  proxies: readonly ProxyDefinition[];
  /** The paths to activate; empty or absent activates all of `proxies`. An unknown path is a ConfigError. */
  activateProxies?: readonly string[];
  /** What the error of an unknown path names as having asked for it: default `activate_proxies` (`--proxy` for exec). */
  activatedBy?: string;
  /** `YYYY-MM-DD` (a date-time is cut to its date): date windows end here and later rows are dropped. */
  cutoffDate?: string | null;
  /** Passed to every proxy call in its context. Default false. */
  deployMode?: boolean;
  /** Cache HTTP responses on disk. Default true. */
  useCache?: boolean;
  /** `$LLLM_HOME`, whose `cache/proxies/` holds the cache. Default: `lllmHome(env)`. */
  home?: string;
  /** Where API keys and base-URL overrides are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The HTTP client. Default the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /** Per call, handler and request together. Default 30 s. */
  timeoutMs?: number;
}

/**
 * The activated proxies of an agent and the one entry point the agent's `CALL_API(path, params)` uses (seed 000,
 * Step 13): the first segment of `path` picks the proxy, the rest its endpoint. `retrieveApiDocs` is what the
 * `query_api_doc` tool returns.
 */
export class ProxyManager {
  /** `YYYY-MM-DD` or undefined. */
  readonly cutoffDate: string | undefined;
  readonly deployMode: boolean;
  private readonly active = new Map<string, ActiveProxy>();
  private readonly cache: ProxyCache | undefined;

  constructor(options: ProxyManagerOptions) {
    const all = indexByPath(options.proxies);
    this.cutoffDate = normalizeCutoff(options.cutoffDate);
    this.deployMode = options.deployMode ?? false;
    const env = options.env ?? process.env;
    this.cache = options.useCache === false ? undefined : new ProxyCache(path.join(options.home ?? lllmHome(env), "cache", "proxies"));
    const wanted = options.activateProxies && options.activateProxies.length > 0 ? [...new Set(options.activateProxies)] : [...all.keys()];
    const unknown = wanted.filter((name) => !all.has(name));
    if (unknown.length > 0) {
      const available = [...all.keys()].sort();
      throw ConfigError.fromProblems(
        "proxy_not_found",
        unknown.map((name) => ({
          message: `${options.activatedBy ?? "activate_proxies"} names \`${name}\`, which is not a loaded proxy`,
          hint: [didYouMean(name, available), available.length > 0 ? `Available proxies: ${available.join(", ")}.` : "No proxies are loaded: add a package with a proxies/ folder."].filter(Boolean).join(" "),
        })),
      );
    }
    for (const name of wanted) {
      this.active.set(
        name,
        new ActiveProxy(all.get(name)!, {
          ...(this.cutoffDate !== undefined ? { cutoffDate: this.cutoffDate } : {}),
          deployMode: this.deployMode,
          ...(this.cache ? { cache: this.cache } : {}),
          env,
          fetch: options.fetch ?? globalThis.fetch,
          timeoutMs: options.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS,
        }),
      );
    }
  }

  /**
   * A manager for an agent's `proxy:` block (snake_case keys as in the tactic file); `activate_proxies`,
   * `cutoff_date`, `deploy_mode` and `use_cache` are read from it, the rest from `options`.
   */
  static fromConfig(config: ProxyConfig | undefined, options: Omit<ProxyManagerOptions, "activateProxies" | "cutoffDate" | "deployMode" | "useCache">): ProxyManager {
    return new ProxyManager({
      ...options,
      ...(config?.activate_proxies ? { activateProxies: config.activate_proxies } : {}),
      ...(config?.cutoff_date != null ? { cutoffDate: config.cutoff_date } : {}),
      ...(config?.deploy_mode !== undefined ? { deployMode: config.deploy_mode } : {}),
      ...(config?.use_cache !== undefined ? { useCache: config.use_cache } : {}),
    });
  }

  /** The activated proxy paths, sorted. */
  available(): string[] {
    return [...this.active.keys()].sort();
  }

  /** The activated proxy with this path; a `proxy_unknown` error listing the available ones otherwise. */
  proxy(name: string): ActiveProxy {
    const found = this.active.get(name);
    if (!found) throw this.unknownProxy(name);
    return found;
  }

  /** `CALL_API(path, params)`: `weather/current/Tokyo` calls endpoint `current/{city}` of proxy `weather`. */
  async call(callPath: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (typeof callPath !== "string" || callPath.trim() === "") {
      throw new ProxyCallError("proxy_unknown", `CALL_API needs a path like "${this.available()[0] ?? "proxy"}/<endpoint>". Available proxies: ${this.available().join(", ")}`);
    }
    const trimmed = callPath.trim().replace(/^\/+/, "");
    const slash = trimmed.indexOf("/");
    const name = slash < 0 ? trimmed : trimmed.slice(0, slash);
    return this.proxy(name).call(slash < 0 ? "" : trimmed.slice(slash + 1), params);
  }

  /** The documentation of one activated proxy, or of all (sorted, separated by a blank line): Step 13's format. */
  retrieveApiDocs(name?: string): string {
    if (name !== undefined) return formatApiDocs(this.proxy(name).definition);
    return this.available()
      .map((path) => formatApiDocs(this.active.get(path)!.definition))
      .join("\n\n");
  }

  /** Disk-cache hits and misses of this manager's calls (zeros when caching is off). */
  cacheStats(): CacheStats {
    return this.cache?.stats() ?? { hits: 0, misses: 0 };
  }

  private unknownProxy(name: string): ProxyCallError {
    const available = this.available();
    const near = didYouMean(name, available);
    return new ProxyCallError("proxy_unknown", `no proxy named \`${name}\`.${near ? ` ${near.charAt(0).toUpperCase()}${near.slice(1)}` : ""} Available proxies: ${available.length > 0 ? available.join(", ") : "none"}`);
  }
}

function normalizeCutoff(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const match = typeof value === "string" ? /^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim()) : null;
  const day = match ? `${match[1]}-${match[2]}-${match[3]}` : undefined;
  // Round-tripping through Date catches 2024-02-30 and month 13.
  if (!day || Number.isNaN(Date.parse(day)) || new Date(day).toISOString().slice(0, 10) !== day) {
    throw new ConfigError("proxy_cutoff_invalid", `cutoff_date must be an ISO date such as "2024-01-01" (got ${JSON.stringify(value)})`, { hint: "Write it YYYY-MM-DD; it is the last day whose data the proxies may return." });
  }
  return day;
}
