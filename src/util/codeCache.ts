import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import { Script } from "node:vm";
import { privateFolder } from "./privateFolder.js";
import { underStartFlags, v8FlagsSetAtRunTime } from "./runtimeV8Flags.js";

/**
 * V8's compiled code of lllm's bundle (dist/bundle/, which bin/lllm.js loads through `requireCompiled`), its one-file
 * dependencies (dist/vendor/) and generated validators, kept between runs, with every function the run called.
 * Node 22.1+ has a compile cache of its own (`module.enableCompileCache`, which bin/lllm.js turns on for what Node
 * loads itself), but it saves a file's code when the file is compiled, before it runs: its top level only. V8
 * compiles a function when it is first called, so every start compiled again lllm's own code a run calls,
 * commander's parsing, the tactic's generated validator (170 KB) and the zod a tool uses; this cache, written at
 * exit, holds them (a 100-round `lllm run`: a fifth less CPU on Node 20). Node before 22.1 has no cache at all.
 * Off unless the CLI names a folder (`$LLLM_HOME/cache/v8`, readable by this user alone). The key holds the file's
 * path, size and time, Node's version, the flags V8 was started with and the command (`useCodeCache`), and V8 checks
 * the data again itself (its version, its flags); data it rejects is written anew.
 */
let folder: string | undefined;
/** The folder last named (`folder` is it once checked, or undefined when it may not be used). */
let named: string | undefined;
/** The command whose compiled code this process keeps (see `useCodeCache`). */
let command = "";

/**
 * Keep compiled code in `cacheFolder` (none when undefined). `forCommand`: the CLI command this process runs (`run`,
 * `validate`), or a kind of one that calls code the others do not (`run --no-log`, `batch --no-log`, `run --resume`:
 * bin/lllm.js's `commandOf`); kept when not given. Each command keeps data of its own: V8's data holds the functions
 * compiled when it was made, and data V8 takes is not made again, so the first command to load a chunk would decide
 * for every other which of its functions start compiled (a `validate`, then every `lllm run` compiling the rest).
 */
export function useCodeCache(cacheFolder: string | undefined, forCommand?: string): void {
  if (forCommand !== undefined) command = forCommand;
  // The CLI names the folder bin/lllm.js named already: checked once.
  if (cacheFolder === named) return;
  folder = named = cacheFolder;
  checked = false;
}

/**
 * `import(specifier)` for the bundle's chunks (scripts/bundle.js sends each `import()` of theirs here): bin/lllm.js
 * compiles them from V8's cached data, after which Node 20 no longer finds the module loader an `import()` in them
 * needs ("A dynamic import callback was not specified"). This file is loaded by Node itself. Relative specifiers
 * resolve from this file's folder, which is theirs.
 */
export function importModule(specifier: string): Promise<unknown> {
  return import(specifier);
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
  let cacheFile: string;
  try {
    source = readFileSync(file, "utf8");
    cacheFile = cacheFileOf(folder, file);
  } catch {
    return fallback(file);
  }
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
 * Where the compiled code of `file` is kept in `folder`, for a process started with V8's `flags` that runs `forCommand`
 * (this process's by default): keyed by the file's path, size and time, Node's version, the flags and the command.
 * Throws what `stat` throws.
 */
export function cacheFileOf(folder: string, file: string, flags: readonly string[] = v8Flags(), forCommand = command): string {
  const stat = statSync(file);
  const key = createHash("sha256").update(JSON.stringify([file, stat.size, stat.mtimeMs, process.version, process.arch, flags, forCommand])).digest("hex").slice(0, 40);
  return path.join(folder, `${key}.bin`);
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
  pruneOnce(path.dirname(cacheFile));
}

/** Data no run has read for this long is deleted (when data is written: a build or a Node that is gone left it). */
const UNUSED_MS = 30 * 24 * 60 * 60 * 1000;
const pruned = new Set<string>();

/**
 * Delete the data of files no run has loaded lately: each build of lllm, each Node version and each command adds
 * its own (about 1.5 MB a command), and nothing else ever removes it. Read times show use (a file V8 takes is read,
 * never written again); where they are not kept, the write time: such data is made again once a month.
 */
function pruneOnce(cacheFolder: string): void {
  if (pruned.has(cacheFolder)) return;
  pruned.add(cacheFolder);
  try {
    const now = Date.now();
    for (const name of readdirSync(cacheFolder)) {
      if (!name.endsWith(".bin") && !name.endsWith(".partial")) continue;
      const file = path.join(cacheFolder, name);
      try {
        const stat = statSync(file);
        if (now - Math.max(stat.atimeMs, stat.mtimeMs) > UNUSED_MS) unlinkSync(file);
      } catch {
        // Gone meanwhile (another run pruned it).
      }
    }
  } catch {
    // The folder cannot be listed: nothing to prune.
  }
}
