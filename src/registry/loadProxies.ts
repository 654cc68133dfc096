import { collectProblemsAsync, ConfigError, type ConfigProblem } from "../errors.js";
import type { Registry } from "./Registry.js";
import { builtinProxies } from "../proxies/builtinProxies.js";
import { indexByPath } from "../proxies/indexByPath.js";
import { loadProxyFile } from "./loadProxyFile.js";
import type { ProxyDefinition } from "../proxies/ProxyDefinition.js";

export interface LoadProxiesOptions {
  /** Include lllm's built-in proxies (first, so a package's proxy with the same path replaces one). Default true. */
  builtins?: boolean;
}

/**
 * Every proxy available to a run: the built-ins, then each loaded package's `proxies/*.yaml|ts` files. Every
 * problem of every file is reported at once; two package proxies with one `path` are a `proxy_duplicate`
 * ConfigError naming both files. The result is what `ProxyManager` takes as `proxies`.
 */
export async function loadProxies(registry: Registry, options: LoadProxiesOptions = {}): Promise<ProxyDefinition[]> {
  const definitions: ProxyDefinition[] = options.builtins === false ? [] : [...(await builtinProxies())];
  const problems: ConfigProblem[] = [];
  for (const pkg of registry.list()) {
    for (const entry of pkg.proxies.values()) {
      definitions.push(...((await collectProblemsAsync(problems, () => loadProxyFile(entry.file, { packageName: pkg.name }))) ?? []));
    }
  }
  if (problems.length > 0) throw ConfigError.fromProblems("proxy_invalid", problems);
  // Throws on duplicates; a package proxy has replaced any built-in of its path.
  return [...indexByPath(definitions).values()];
}
