import type { Jiti } from "jiti";

let loader: Promise<Jiti> | undefined;

/**
 * Import a package's code file (`.ts`, `.mts`, `.js`, `.mjs`, `.cjs`) with no build step and nothing installed in
 * the package folder. jiti transpiles TypeScript on the fly; its `virtualModules` make `import … from "lllm"` (and
 * `"zod"`) resolve to the very modules this process runs, so `tool()` and zod schemas made in a package are the
 * same objects lllm checks against, wherever on disk the package lives.
 *
 * The loader is created on first use: start-up of commands that load no code stays fast.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  loader ??= createLoader();
  const jiti = await loader;
  const loaded: unknown = await jiti.import(file);
  return typeof loaded === "object" && loaded !== null ? (loaded as Record<string, unknown>) : { default: loaded };
}

async function createLoader(): Promise<Jiti> {
  const [{ createJiti }, self, zod] = await Promise.all([import("jiti"), import("../index.js"), import("zod")]);
  return createJiti(import.meta.url, {
    virtualModules: { lllm: self, zod, "zod/v4": zod },
    interopDefault: false,
    // The transpile cache lives in the OS temp folder (jiti's default); it is keyed by file content.
    fsCache: true,
    moduleCache: true,
  });
}
