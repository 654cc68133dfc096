import { createHash, getFips } from "node:crypto";
import { readFileSync } from "node:fs";
import Module, { createRequire, isBuiltin } from "node:module";
import path from "node:path";
import { runInThisContext } from "node:vm";
import { isCodeFile } from "../util/codeFile.js";

/**
 * Import a package's code file from jiti's transpile cache without loading jiti (a fifth of a warm `lllm validate`'s
 * own start-up): when jiti wrote the file's code there earlier and the file imports nothing but `lllm`, `zod` and
 * Node's built-in modules (a typical tool file). TypeScript, and JavaScript modules too: jiti rewrites an `.mjs`
 * file's `import … from "lllm"` as it does a `.ts` file's, and keeps the result in the same cache. The code is run as jiti runs it (the same
 * wrapper, file name and module record), so stack traces, `import.meta.url` and `tool()` objects are the same.
 * Anything else (a relative or package import, `require`, a stale or missing entry) is `undefined`: jiti imports
 * the file as before.
 *
 * This reads jiti's own cache format: its file naming and the stamp on the last line (jiti 2.7, pinned exactly in
 * package.json). A jiti with another format simply never matches.
 */
export async function importFromTranspileCache(file: string, options: { folder: string; virtualModules: Record<string, unknown> }): Promise<Record<string, unknown> | undefined> {
  if (!isCodeFile(file)) return undefined;
  const known = (Module as unknown as { _cache: Record<string, Module | undefined> })._cache[file];
  if (known?.loaded) return known.exports as Record<string, unknown>;
  let code: string;
  try {
    const source = readFileSync(file, "utf8");
    const stamp = ` /* v9-${hash(source, 16)} */\n`;
    const name = `${path.basename(path.dirname(file))}-${withoutExtension(path.basename(file))}.${hash(file, 8)}.mjs`;
    code = readFileSync(path.join(options.folder, name), "utf8");
    if (!code.endsWith(stamp)) return undefined;
  } catch {
    return undefined;
  }
  if (code.startsWith("#!")) code = `// ${code}`;
  const imports = [...code.matchAll(/jitiImport\(("(?:[^"\\]|\\.)*")\)/g)].map((match) => JSON.parse(match[1]!) as string);
  const calls = code.split("jitiImport(").length - 1;
  const importable = (id: string): boolean => id in options.virtualModules || isBuiltin(id);
  if (imports.length !== calls || !imports.every(importable) || /\brequire\s*\(|jitiESMResolve/.test(code)) return undefined;

  const module = new Module(file);
  module.filename = file;
  module.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(path.dirname(file));
  const cache = (Module as unknown as { _cache: Record<string, Module | undefined> })._cache;
  cache[file] = module; // as jiti does: a later jiti import of this file shares it
  const jitiImport = async (id: string): Promise<unknown> => (id in options.virtualModules ? options.virtualModules[id] : import(id));
  try {
    const run = runInThisContext(`(async function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${code}\n});`, { filename: file, lineOffset: 0 }) as (...args: unknown[]) => Promise<void>;
    await run(module.exports, createRequire(file), module, file, path.dirname(file), jitiImport, undefined);
  } catch (error) {
    delete cache[file];
    throw error;
  }
  module.loaded = true;
  return module.exports as Record<string, unknown>;
}

/** jiti's hash: MD5, or SHA-256 where the OpenSSL build is in FIPS mode, as hex, cut to `length`. */
function hash(text: string, length: number): string {
  return createHash(getFips() ? "sha256" : "md5").update(text).digest("hex").slice(0, length);
}

function withoutExtension(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? name : name.slice(0, dot);
}
