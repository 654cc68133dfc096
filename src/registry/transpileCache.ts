import path from "node:path";
import { codeCacheFolder } from "../config/lllmHome.js";

/**
 * Where jiti keeps TypeScript it has transpiled (package tools, tactics and proxies written in `.ts`), so that later
 * runs load them without transpiling again: `jiti/` in the code cache (`LLLM_CODE_CACHE`, else `$LLLM_HOME/cache`),
 * which the CLI names, and which library use (`serve()`, `runTactic` in a program of the user's) takes as well.
 * Never jiti's default folder, `<os temp>/jiti`: it is shared by every user of the machine, and jiti trusts a cached
 * file whose name and last line match the source (both computable by anyone), so another user could plant code
 * there that lllm would run.
 */
let folder: string | undefined;
let named = false;

/** Name the folder (`undefined`: keep no transpiled files). */
export function useTranspileCache(cacheFolder: string | undefined): void {
  folder = cacheFolder;
  named = true;
}

/** The folder named, or the code cache's `jiti/` when none was (read each time: a program may change LLLM_HOME). */
export function transpileCacheFolder(): string | undefined {
  return named ? folder : path.join(codeCacheFolder(), "jiti");
}
