/**
 * Where jiti keeps TypeScript it has transpiled (package tools, tactics and proxies written in `.ts`), so that later
 * runs load them without transpiling again. The CLI names `$LLLM_HOME/cache/jiti`: jiti's default folder,
 * `<os temp>/jiti`, is shared by every user of the machine, and jiti trusts a cached file whose name and last line
 * match the source (both computable by anyone), so another user could plant code there that lllm would run.
 * Unset (library use), jiti's default applies.
 */
let folder: string | undefined;

export function useTranspileCache(cacheFolder: string | undefined): void {
  folder = cacheFolder;
}

export function transpileCacheFolder(): string | undefined {
  return folder;
}
