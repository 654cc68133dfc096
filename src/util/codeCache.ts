import { createHash } from "node:crypto";
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import { Script } from "node:vm";
import { privateFolder } from "./privateFolder.js";
import { underStartFlags, v8FlagsSetAtRunTime } from "./runtimeV8Flags.js";

/**
 * V8's compiled code of lllm's one-file dependencies (dist/vendor/) and generated validators, kept between runs, with
 * every function the run called. Node 22.1+ has a compile cache of its own (`module.enableCompileCache`, which
 * bin/lllm.js turns on for the bundle), but it saves a file's code when the file is compiled, before it runs: its top
 * level only. V8 compiles a function when it is first called, so every start compiled again commander's parsing,
 * the tactic's generated validator (170 KB) and the zod a tool uses; this cache, written at exit, holds
 * them (`lllm validate` of the weather example: 11% less CPU on Node 22). Node before 22.1 has no cache at all.
 * Off unless the CLI names a folder (`$LLLM_HOME/cache/v8`, readable by this user alone). The key holds the file's
 * path, size and time, Node's version and the flags V8 was started with, and V8 checks the data again itself (its
 * version, its flags); data it rejects is written anew.
 */
let folder: string | undefined;

export function useCodeCache(cacheFolder: string | undefined): void {
  folder = cacheFolder;
  checked = false;
}

let checked = false;

/** `require(file)` of a CommonJS file, compiled from the cache when there is one. */
export function requireCompiled(file: string, fallback: (file: string) => unknown): unknown {
  if (!checked) {
    // Compiled code is only taken from a folder no one else can write to (see privateFolder).
    checked = true;
    folder = privateFolder(folder);
  }
  if (folder === undefined) return fallback(file);
  const known = (Module as unknown as { _cache: Record<string, Module> })._cache[file];
  if (known) return known.exports;
  let source: string;
  let key: string;
  try {
    source = readFileSync(file, "utf8");
    const stat = statSync(file);
    key = createHash("sha256").update(JSON.stringify([file, stat.size, stat.mtimeMs, process.version, process.arch, v8Flags()])).digest("hex").slice(0, 40);
  } catch {
    return fallback(file);
  }
  const cacheFile = path.join(folder, `${key}.bin`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = new Module(file);
  module.filename = file;
  module.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(path.dirname(file));
  // In require's cache before it runs, as require does, so that a later require of the same file shares it.
  (Module as unknown as { _cache: Record<string, Module> })._cache[file] = module;
  try {
    (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, siblingsCompiled(file, fallback), module, file, path.dirname(file));
  } catch (error) {
    delete (Module as unknown as { _cache: Record<string, Module> })._cache[file];
    throw error;
  }
  module.loaded = true;
  if (!cachedData || script.cachedDataRejected === true) storeAtExit(cacheFile, script, v8FlagsSetAtRunTime().length > 0);
  return module.exports;
}

/**
 * The `require` of a file loaded here: a CommonJS file beside it (`./chunk.cjs`, a chunk the bundler split off) is
 * loaded here too, with its cache; anything else as `require` would.
 */
function siblingsCompiled(file: string, fallback: (file: string) => unknown): NodeJS.Require {
  const plain = createRequire(file);
  const sibling = (id: string): unknown => (/^\.\/[^/\\]+\.cjs$/.test(id) ? requireCompiled(path.join(path.dirname(file), id), fallback) : plain(id));
  return Object.assign(sibling, { resolve: plain.resolve, cache: plain.cache, extensions: plain.extensions, main: plain.main }) as NodeJS.Require;
}

/**
 * The options that set V8's flags: those of the command line and of NODE_OPTIONS. (V8's own tag of its flags,
 * `v8.cachedDataVersionTag()`, costs loading node:v8, a few ms of every start: runs with other flags get another
 * key all the same, and data made under other flags is rejected by V8 and written anew.)
 */
function v8Flags(): string[] {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? "", ...v8FlagsSetAtRunTime()];
}

/** Code caches to write when the process ends, and whether V8's flags had been changed when each was loaded. */
const unsaved = new Map<string, { script: Script; underChangedFlags: boolean }>();

/**
 * Write the file's code cache when the process exits, not once its top level has run: V8 compiles a function when
 * it is first called, and the data then holds every function this run called (commander's parsing, the validators,
 * the zod a tool used), which the next run then need not compile either.
 *
 * A server sets a V8 flag once it has started (steadyHeap): V8 stamps the data with its flags as they are when the
 * data is made, so a file loaded before that is written under the flags V8 started with, where the next start
 * loads it (stamped with the server's, every `lllm serve` or `lllm worker` start, and the `lllm run` after one,
 * compiled zod and commander again and wrote them anew: ~30 ms of CPU a start). A file loaded after it has a key of
 * its own (`v8Flags`) and is written as it is.
 */
function storeAtExit(cacheFile: string, script: Script, underChangedFlags: boolean): void {
  if (unsaved.size === 0) process.once("exit", () => {
    underStartFlags(() => {
      for (const [file, entry] of unsaved) if (!entry.underChangedFlags) store(file, entry.script);
    });
    for (const [file, entry] of unsaved) if (entry.underChangedFlags) store(file, entry.script);
    unsaved.clear();
  });
  unsaved.set(cacheFile, { script, underChangedFlags });
}

function store(cacheFile: string, script: Script): void {
  try {
    // Written whole, then renamed: a concurrent run reads the old state or the new file, never half of it.
    const partial = `${cacheFile}.${process.pid}.partial`;
    writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
    renameSync(partial, cacheFile);
  } catch {
    // No cache this time: the next run compiles again.
  }
}
