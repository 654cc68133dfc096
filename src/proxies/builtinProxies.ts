import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import type { ProxyDefinition } from "./ProxyDefinition.js";
import { readProxyFile } from "./readProxyFile.js";

let loaded: Promise<ProxyDefinition[]> | undefined;

/**
 * The proxies that ship with lllm (seed 000, Step 15): FRED (`fred`), Financial Modeling Prep (`fmp`), Exa (`exa`),
 * Wolfram Alpha (`wa`), Main Street Data (`msd`) and Google Trends via SearchApi (`gt`). They are declarative YAML
 * files beside this module (copied into dist/ by the build), read once. Each reads its key from the environment
 * only when it is called, so they all load without keys.
 */
export function builtinProxies(): Promise<ProxyDefinition[]> {
  loaded ??= readBuiltins().catch((error: unknown) => {
    loaded = undefined;
    throw error;
  });
  return loaded;
}

async function readBuiltins(): Promise<ProxyDefinition[]> {
  // The path goes through the folder's name: it holds from dist/<folder>/ and from the bundle in dist/bundle/ alike.
  const dir = fileURLToPath(new URL("../proxies/builtin/", import.meta.url));
  const files = (await readdir(dir)).filter((name) => /\.ya?ml$/.test(name)).sort();
  return Promise.all(files.map((name) => readProxyFile(path.join(dir, name), { kind: "builtin" })));
}
