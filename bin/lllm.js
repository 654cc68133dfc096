#!/bin/sh
":" //; exec node -- "$0" "$@"
// The two lines above are read by sh, then by Node as a string and a comment: the `lllm` command runs this file as
// `node -- lllm.js ARGS`. Without the `--`, Node itself reads every `--env-file FILE` of the command line, after the
// script's name too, and applies that file's NODE_OPTIONS (`--require evil.cjs`) to lllm's own process before any
// of lllm runs: a hostile .env in a cloned repository would run code (issue 29, point 6). `#!/usr/bin/env -S node --`
// would do the same where env has -S, which busybox's (Alpine) has not; sh is everywhere.
// Thin launcher: everything lives in the built CLI (one bundle, scripts/bundle.js) so start-up stays one import.
// CommonJS (bin/package.json says so), unlike the rest of lllm: an ES module as the main script starts Node's ES
// module loader first, ~10 ms of every start on Node 20, which `--version` (answered here) then never uses; a
// command's `import()` of the bundle starts it when it is needed, and costs the same from here.
// Builtins through process.getBuiltinModule (Node 20.16+), not ES imports: an imported builtin costs a facade that
// reads all its exports (scripts/builtinImports.js, which does the same for the bundle).
if (typeof process.getBuiltinModule !== "function") {
  process.stderr.write(`lllm: needs Node.js 20.19 or later; this is ${process.version}. Install a newer Node (https://nodejs.org).\n`);
  process.exit(2);
}
const { lstatSync, mkdirSync, readdirSync, readFileSync, statSync } = process.getBuiltinModule("node:fs");

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // Answered here, as the CLI would: scripts call it often, and it needs nothing else loaded.
  process.stdout.write(`${JSON.parse(readFileSync(`${__dirname}/../package.json`, "utf8")).version}\n`);
} else {
  enableCompileCache()
    .then(loadCli)
    .then((cli) => cli.main(process.argv))
    .catch((error) => {
      process.stderr.write(`lllm: could not start: ${error?.message ?? error}\nRun \`npm run build\` in the lllm folder first.\n`);
      process.exitCode = 1;
    });
}

// A build swaps its new dist/ in with two renames (scripts/build.js): for an instant between them there is none.
// A start that falls in that instant (a build's folder is there beside dist/) waits a little and tries again.
async function loadCli() {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await import(attempt === 0 ? "../dist/bundle/cli.js" : `../dist/bundle/cli.js?retry=${attempt}`);
    } catch (error) {
      if (error?.code !== "ERR_MODULE_NOT_FOUND" || attempt >= 40 || !buildUnderWay()) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

function buildUnderWay() {
  try {
    return readdirSync(`${__dirname}/..`).some((name) => /^dist\.(tmp|old)-\d+$/.test(name));
  } catch {
    return false;
  }
}

// Node 22.1+ keeps compiled code of lllm and its dependencies on disk between runs, here in a folder of this
// user's own: in the shared temp folder (Node's default) another local user could plant compiled code for lllm's
// files. It keeps a module's top level only: lllm's own cache (util/codeCache.ts) keeps its one-file dependencies
// with the functions a run called, on every Node. The folder is `node/` in the code cache: LLLM_CODE_CACHE, else
// $LLLM_HOME/cache (config/lllmHome.ts, codeCacheFolder, which warns about a folder it does not use).
// Its modules are taken here, not at the top: `--version` above needs none of them (each costs a start-up).
async function enableCompileCache() {
  const [{ homedir }, path, module] = ["node:os", "node:path", "node:module"].map((name) => process.getBuiltinModule(name));
  if (!module.enableCompileCache || process.env.NODE_COMPILE_CACHE) return;
  const home = process.env.LLLM_HOME ? path.resolve(process.env.LLLM_HOME) : path.join(homedir(), ".lllm");
  const named = process.env.LLLM_CODE_CACHE ? path.resolve(process.env.LLLM_CODE_CACHE) : undefined;
  try {
    // Nothing is made in a folder of another user's, or one others can write to, or below one (lllm ignores such a
    // home or code cache too): a code cache lllm does not use gives way to the home's, as in codeCacheFolder.
    const inNamed = named !== undefined && ownFolder(named, statSync) && trustedAbove(named, path);
    const cache = inNamed ? path.join(named, "node") : path.join(home, "cache", "node");
    if (!inNamed && (!ownFolder(home, statSync) || !trustedAbove(home, path))) return;
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    // Only a folder of this user's that no one else can write to (compiled code is trusted as it is).
    if (!ownFolder(cache, lstatSync)) return;
    module.enableCompileCache(cache);
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
