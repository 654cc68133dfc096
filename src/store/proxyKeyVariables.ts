import { readFileSync } from "node:fs";
import { BUILTIN_KEY_VARIABLES } from "../proxies/builtinKeyVariables.js";
import type { Registry } from "../registry/index.js";

// `api_key_env: NAME` in a proxy file (YAML), `apiKeyEnv: "NAME"` in a proxy class.
const KEY_VARIABLE = /(?:^|\s)api_key_env:\s*["']?([A-Za-z_][A-Za-z0-9_]*)|apiKeyEnv\s*[:=]\s*["'`]([A-Za-z_][A-Za-z0-9_]*)/gm;

/**
 * The environment variables that hold proxies' API keys (built-in proxies and the loaded packages' proxies). Their
 * names need not look like secrets (`WA_API_DEV`), so the run store asks the proxy files. Read as text, without
 * loading the proxies: a run that uses none must not pay for them.
 */
export function proxyKeyVariables(registry: Registry): Set<string> {
  const names = new Set(Object.values(BUILTIN_KEY_VARIABLES));
  for (const pkg of registry.list()) {
    for (const entry of pkg.proxies.values()) {
      let text: string;
      try {
        text = readFileSync(entry.file, "utf8");
      } catch {
        continue;
      }
      for (const match of text.matchAll(KEY_VARIABLE)) names.add((match[1] ?? match[2])!);
    }
  }
  return names;
}
