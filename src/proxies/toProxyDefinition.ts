import { proxy, PROXY_BRAND } from "./proxy.js";
import type { ProxyDefinition } from "./ProxyDefinition.js";
import type { ProxySpec } from "./ProxySpec.js";

/**
 * The proxy a module export stands for, or undefined when it is something else (helpers may be exported too):
 * a definition made by `proxy()` (from any copy of lllm, by its brand), or a plain `{ path, endpoints, … }` spec,
 * which goes through `proxy()` and its checks.
 */
export function toProxyDefinition(value: unknown): ProxyDefinition | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string | symbol, unknown>;
  if (record[PROXY_BRAND] === true) return value as ProxyDefinition;
  if (typeof record.path === "string" && Array.isArray(record.endpoints)) return proxy(value as ProxySpec);
  return undefined;
}
