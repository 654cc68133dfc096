#!/bin/sh
":" //; exec node -- "$0" "$@"
// The two lines above are read by sh, then by Node as a string and a comment: the `lllm` command runs this file as
// `node -- lllm.js ARGS`. Without the `--`, Node itself reads every `--env-file FILE` of the command line, after the
// script's name too, and applies that file's NODE_OPTIONS (`--require evil.cjs`) to lllm's own process before any
// of lllm runs: a hostile .env in a cloned repository would run code (issue 29, point 6). `#!/usr/bin/env -S node --`
// would do the same where env has -S, which busybox's (Alpine) has not; sh is everywhere.
// Thin launcher: everything lives in the built CLI (one bundle, scripts/bundle.js), loaded with V8's compiled code
// of the last runs (src/util/codeCache.ts). CommonJS (bin/package.json says so), as the bundle: an ES module as the
// main script starts Node's ES module loader first, ~10 ms of every start on Node 20, which `--version` (answered
// here) and most commands never use.
// Builtins through process.getBuiltinModule (Node 20.16+), not ES imports: an imported builtin costs a facade that
// reads all its exports.
if (typeof process.getBuiltinModule !== "function") {
  process.stderr.write(`lllm: needs Node.js 20.19 or later; this is ${process.version}. Install a newer Node (https://nodejs.org).\n`);
  process.exit(2);
}
const { lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeSync } = process.getBuiltinModule("node:fs");

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // Answered here, as the CLI would: scripts call it often, and it needs nothing else loaded.
  printVersion(`${JSON.parse(readFileSync(`${__dirname}/../package.json`, "utf8")).version}\n`);
} else {
  const cache = cacheFolder();
  enableCompileCache(cache);
  loadCli(cache)
    .then((cli) => cli.main(process.argv))
    .catch((error) => {
      process.stderr.write(`lllm: could not start: ${error?.message ?? error}\nRun \`npm run build\` in the lllm folder first.\n`);
      process.exitCode = 1;
    });
}

// Written to the descriptor itself: `process.stdout` is made on first use (for a pipe, a socket with Node's stream
// modules), which took a tenth of `node -e 0`'s whole start for one line. A full non-blocking pipe (EAGAIN) gets it
// through the stream, which waits; a reader gone (EPIPE, `lllm -V | true`) or no stdout at all (EBADF) is no error,
// as in the CLI; any other failure is said, with exit 1.
function printVersion(text) {
  try {
    writeSync(1, text);
  } catch (error) {
    if (error?.code === "EAGAIN") process.stdout.write(text);
    else if (error?.code !== "EPIPE" && error?.code !== "EBADF") {
      process.stderr.write(`lllm: could not print the version: ${error?.message ?? error}\n`);
      process.exitCode = 1;
    }
  }
}

// A build swaps its new dist/ in with two renames (scripts/build.js): for an instant between them there is none.
// A start that falls in that instant (a build's folder is there beside dist/) waits a little and tries again.
async function loadCli(cache) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return loadBundle(cache);
    } catch (error) {
      if (error?.code !== "MODULE_NOT_FOUND" || attempt >= 40 || !buildUnderWay()) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

// The CLI through lllm's code cache, in `v8/` of the cache folder (none without one: it loads as require loads it).
// V8 compiles a function when it is first called and Node keeps no compiled code of them between runs: without it,
// every start compiled again the code it runs (a fifth of the CPU of a 100-round `lllm run`). The cache's own chunk
// is loaded first, as any file; the CLI's chunks, and the chunks they load later, through it.
function loadBundle(cache) {
  const path = process.getBuiltinModule("node:path");
  const bundle = path.join(__dirname, "..", "dist", "bundle");
  const { useCodeCache, requireCompiled } = require(path.join(bundle, "codeCache.cjs"));
  useCodeCache(cache === undefined ? undefined : path.join(cache, "v8"), commandOf(args));
  return requireCompiled(path.join(bundle, "cli.cjs"), require);
}

// The command this process runs (`run`, `mcp`): each keeps compiled code of its own (util/codeCache.ts says why).
// A word that is no command name (a typo, an option's value) keeps it under "". So do the kinds of a command that
// call much of lllm another does not: one without its log (no recorder, no journal: `--no-log`, LLLM_LOG=0, for the
// commands that record) and a resume (the record read and replayed). Under one key, the first run of a new build
// decided for the others: after a first `--no-log` run, every recorded run compiled the recorder again (8.1% more
// instructions for a 100-round run against `--no-log`, 6.2% with data of its own). A project whose settings turn
// the log off shares the recorded key (harmless: slower).
function commandOf(words) {
  const word = words.find((candidate) => !candidate.startsWith("-"));
  if (word === undefined || !/^[a-z]{1,20}$/.test(word)) return "";
  if (!["run", "chat", "batch", "test", "worker"].includes(word)) return word;
  if (word === "run" && words.some((candidate) => candidate === "--resume" || candidate.startsWith("--resume="))) return "run --resume";
  const log = process.env.LLLM_LOG;
  return words.includes("--no-log") || log === "0" || log === "false" ? `${word} --no-log` : word;
}

function buildUnderWay() {
  try {
    return readdirSync(`${__dirname}/..`).some((name) => /^dist\.(tmp|old)-\d+$/.test(name));
  } catch {
    return false;
  }
}

// The folder of compiled code, in a folder of this user's own: in the shared temp folder another local user could
// plant compiled code for lllm's files. LLLM_CODE_CACHE, else $LLLM_HOME/cache (config/lllmHome.ts, codeCacheFolder,
// which warns about a folder it does not use); undefined when neither may be used. Nothing is made in a folder of
// another user's, or one others can write to, or below one (lllm ignores such a home or code cache too): a code
// cache lllm does not use gives way to the home's, as in codeCacheFolder.
// Its modules are taken here, not at the top: `--version` above needs none of them (each costs a start-up).
function cacheFolder() {
  const [{ homedir }, path] = ["node:os", "node:path"].map((name) => process.getBuiltinModule(name));
  const home = process.env.LLLM_HOME ? path.resolve(process.env.LLLM_HOME) : path.join(homedir(), ".lllm");
  const named = process.env.LLLM_CODE_CACHE ? path.resolve(process.env.LLLM_CODE_CACHE) : undefined;
  try {
    if (named !== undefined && ownFolder(named, statSync) && trustedAbove(named, path)) return named;
    return ownFolder(home, statSync) && trustedAbove(home, path) ? path.join(home, "cache") : undefined;
  } catch {
    return undefined; // no cache this time: start as without one
  }
}

// Node 22.1+ keeps compiled code of what Node loads itself (package files, dependencies from node_modules) on disk
// between runs, in `node/` of the cache folder; its top level only, where lllm's own cache (above) keeps the
// bundle with the functions a run called.
function enableCompileCache(cache) {
  const module = process.getBuiltinModule("node:module");
  if (!module.enableCompileCache || process.env.NODE_COMPILE_CACHE || cache === undefined) return;
  const folder = `${cache}/node`;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Only a folder of this user's that no one else can write to (compiled code is trusted as it is).
    if (!ownFolder(folder, lstatSync)) return;
    module.enableCompileCache(folder);
  } catch {
    // No cache this time (a read-only home): start as without one.
  }
}

// Whether the folders above `folder` are this user's or root's and let no one else write to them, but for a
// shared folder with the sticky bit (/tmp: others cannot rename what is ours there); as config/distrust.ts judges a
// home, without LLLM_TRUSTED_PATHS (a folder trusted only so runs without Node's cache).
function trustedAbove(folder, path) {
  for (let current = path.dirname(folder); ; current = path.dirname(current)) {
    let found;
    try {
      found = statSync(current);
    } catch (error) {
      if (error?.code !== "ENOENT") return false;
    }
    if (found) {
      if (found.uid !== process.getuid?.() && found.uid !== 0) return false;
      const othersWrite = (found.mode & 0o002) !== 0 || ((found.mode & 0o020) !== 0 && found.gid !== process.getgid?.());
      if (othersWrite && (found.mode & 0o1000) === 0) return false;
    }
    if (path.dirname(current) === current) return true;
  }
}

// A folder of this user's that no one else can write to; one not there yet counts (it is made this user's, 0700).
function ownFolder(folder, stat) {
  let found;
  try {
    found = stat(folder);
  } catch (error) {
    return error?.code === "ENOENT";
  }
  return found.isDirectory() && found.uid === process.getuid?.() && (found.mode & 0o022) === 0;
}
