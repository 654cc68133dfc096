import type { Jiti } from "jiti";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runInToolScope } from "../tools/toolScope.js";
import { zodModule } from "../util/lazyZod.js";
import { privateFolder } from "../util/privateFolder.js";
import { transpileCacheFolder } from "./transpileCache.js";
import { importFromTranspileCache } from "./importFromTranspileCache.js";

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
  // A tool file's top-level code is tool code too: what it prints is marked with its name, like a tool's output.
  const loaded: unknown = await runInToolScope({ label: path.basename(file), file, kind: "import" }, async () => {
    const folder = usableCacheFolder();
    const cached = folder === undefined ? undefined : await importFromTranspileCache(file, { folder, virtualModules: await virtualModules() });
    if (cached) return cached;
    loader ??= createLoader();
    return (await loader).import(file);
  });
  return typeof loaded === "object" && loaded !== null ? (loaded as Record<string, unknown>) : { default: loaded };
}

async function createLoader(): Promise<Jiti> {
  // jiti is CommonJS: `require` loads it as such, where `import()` would first scan its 190 KB bundle for export
  // names (Node's CommonJS lexer), which costs more than loading it.
  const { createJiti } = createRequire(import.meta.url)("jiti") as typeof import("jiti");
  return createJiti(import.meta.url, {
    // zod loads when a package file reads from it, not for every tool file.
    virtualModules: await virtualModules(),
    interopDefault: false,
    // Transpiled files are kept between runs, keyed by file content, in a folder of this user's own (see
    // transpileCache.ts): none when another user could write to it. Never jiti's default, the shared temp folder.
    fsCache: usableCacheFolder() ?? false,
    moduleCache: true,
  });
}

let checked: { named: string | undefined; usable: string | undefined } | undefined;

/** The transpile cache (see transpileCache.ts), when no one else can write to it (else none: see privateFolder). */
function usableCacheFolder(): string | undefined {
  const named = transpileCacheFolder();
  if (checked === undefined || checked.named !== named) checked = { named, usable: privateFolder(named) };
  return checked.usable;
}

let virtual: Promise<Record<string, unknown>> | undefined;

/** What `import … from "lllm"` and `"zod"` give package files, the same objects however a file is loaded. */
function virtualModules(): Promise<Record<string, unknown>> {
  virtual ??= import("../packageApi/index.js").then((light) => ({ lllm: lazyPublicApi(light), zod: zodModule, "zod/v4": zodModule }));
  return virtual;
}

/**
 * The `lllm` module as package files see it: the light names at once, every other public name on first use, from
 * the same module instances this process runs (require() of an ES module shares the import cache).
 */
function lazyPublicApi(light: Record<string, unknown>): Record<string, unknown> {
  let full: Record<string, unknown> | undefined;
  // The bundled build (dist/bundle/) has its index beside this chunk (`index.cjs`, whose chunks the CLI runs); the
  // per-file build one folder up. Either way it is the module instance the CLI runs, so classes (`ToolError`, …) are
  // the ones lllm checks against.
  const index = path.basename(path.dirname(fileURLToPath(import.meta.url))) === "bundle" ? "./index.cjs" : "../index.js";
  const all = (): Record<string, unknown> => (full ??= createRequire(import.meta.url)(index) as Record<string, unknown>);
  const target: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, light);
  return new Proxy(target, {
    // Only a real API name loads the rest: interop probes (`default`, `__esModule`, `then`, symbols) must not.
    get: (object, key) => (key in object ? Reflect.get(object, key) : typeof key === "string" && /^[A-Za-z]/.test(key) && key !== "then" && key !== "default" ? all()[key] : undefined),
  });
}

