import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { cacheFileOf } from "../../src/util/codeCache.js";

// The CLI is spawned several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// The CLI keeps V8's compiled code of its one-file dependencies in $LLLM_HOME/cache/v8, on every Node: Node 22.1+'s
// own compile cache (of the bundle, in $LLLM_HOME/cache/node) keeps a file's top level only. What a user must see:
// the same results, whatever state that folder is in.
const dir = tempDir("lllm-code-cache-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nodeHasCompileCache = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function";

describe("the code cache of lllm's dependencies", () => {
  it("is kept, reused, and survives damaged data", async () => {
    const home = path.join(dir, "home");
    const folder = path.join(home, "cache", "v8");
    const validate = () => runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    const first = await validate();
    expect(first.code, first.stderr).toBe(0);
    const node = path.join(home, "cache", "node");
    if (nodeHasCompileCache) {
      // Node's own cache, in a folder of this user's own rather than the shared temp folder.
      expect(readdirSync(node).length).toBeGreaterThan(0);
      expect(statSync(node).mode & 0o077).toBe(0);
    } else {
      expect(existsSync(node)).toBe(false);
    }
    const files = readdirSync(folder);
    expect(files.length).toBeGreaterThan(0);
    expect(await validate()).toEqual(first);
    // Data V8 rejects (here: not its format at all) is compiled again and written anew.
    for (const file of files) writeFileSync(path.join(folder, file), "not code");
    expect(await validate()).toEqual(first);
    expect(readdirSync(folder).sort()).toEqual(files.sort());
    // Under other V8 flags (here from NODE_OPTIONS) the data is kept apart, and the result is the same.
    const otherFlags = await runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined, NODE_OPTIONS: "--max-old-space-size=1000" } });
    expect(otherFlags).toEqual(first);
    expect(readdirSync(folder).length).toBeGreaterThan(files.length);
  });
});

describe("the code cache of a server", () => {
  // `lllm serve`, `lllm worker` and `lllm mcp serve` change a V8 flag once they have started (util/steadyHeap.ts),
  // and V8 rejects data made under other flags than its own: made after that change, the data of what a server had
  // loaded before it was rejected at every next start, compiled again and written anew (and the `lllm run` after a
  // server's too). A rewrite makes a new file (written beside, then renamed): its inode shows it.
  it("is made under the flags the next start has: a second start and a validate rewrite nothing", async () => {
    const home = path.join(dir, "server");
    const folder = path.join(home, "cache", "v8");
    const env = { LLLM_HOME: home, LLLM_CODE_CACHE: undefined };
    const serve = () => runCli(["mcp", "serve", path.join(EXAMPLE, "weather")], { env, input: "" });
    const inodes = (): Record<string, number> => Object.fromEntries(readdirSync(folder).map((name) => [name, statSync(path.join(folder, name)).ino]));
    const first = await serve();
    expect(first.code, first.stderr).toBe(0);
    const written = inodes();
    expect(Object.keys(written).length).toBeGreaterThan(1);
    // The second start may add a file (what it loads after the change, which the first loaded before it), and
    // rewrites none; a third adds nothing.
    expect((await serve()).code).toBe(0);
    const second = inodes();
    expect(second).toMatchObject(written);
    expect((await serve()).code).toBe(0);
    expect(inodes()).toEqual(second);
    const validated = await runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env });
    expect(validated.code, validated.stderr).toBe(0);
    expect(inodes()).toMatchObject(second);
  });
});

describe("LLLM_CODE_CACHE", () => {
  const weather = path.join(EXAMPLE, "weather", "tactics", "weather.yaml");
  // What `validate` of the weather example keeps: Node's compile cache where Node has one, V8's data of the
  // one-file dependencies, the TypeScript tools transpiled, the tactic's data parsed.
  const codeCaches = nodeHasCompileCache ? ["jiti", "node", "v8", "yaml"] : ["jiti", "v8", "yaml"];
  const filesUnder = (folder: string): string[] => (readdirSync(folder, { recursive: true }) as string[]).sort();

  it("keeps the code caches of every home in one folder, where a run in a new home finds them", async () => {
    const shared = path.join(dir, "shared");
    const homes = [path.join(dir, "home-a"), path.join(dir, "home-b")];
    const first = await runCli(["validate", weather], { env: { LLLM_HOME: homes[0], LLLM_CODE_CACHE: shared } });
    expect(first.code, first.stderr).toBe(0);
    expect(readdirSync(shared)).toEqual(expect.arrayContaining(codeCaches));
    expect(statSync(shared).mode & 0o077).toBe(0);
    const kept = filesUnder(shared);
    // A second home: the same result, and nothing to compile or write again.
    const second = await runCli(["validate", weather], { env: { LLLM_HOME: homes[1], LLLM_CODE_CACHE: shared } });
    expect(second).toEqual(first);
    expect(filesUnder(shared)).toEqual(kept);
    for (const home of homes) expect(existsSync(path.join(home, "cache"))).toBe(false);
  });

  it("is not used when others may write to it: lllm warns, naming it, and keeps to $LLLM_HOME/cache", async () => {
    const open = path.join(dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const home = path.join(dir, "home-c");
    const result = await runCli(["validate", weather], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: open } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`ignored LLLM_CODE_CACHE=${open}: others may write to it (mode 0777); lllm uses ${path.join(home, "cache")} instead`);
    expect(readdirSync(open)).toEqual([]);
    expect(readdirSync(path.join(home, "cache"))).toEqual(expect.arrayContaining(codeCaches));
  });

  it("is never taken from an --env-file (a cloned repository's would name a folder of its own)", async () => {
    const planted = path.join(dir, "planted");
    mkdirSync(planted, { mode: 0o700 });
    const envFile = path.join(dir, "cache.env");
    writeFileSync(envFile, `LLLM_CODE_CACHE=${planted}\n`);
    const home = path.join(dir, "home-d");
    const result = await runCli(["--env-file", envFile, "validate", weather], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`--env-file ${envFile}: ignored LLLM_CODE_CACHE`);
    expect(readdirSync(planted)).toEqual([]);
    expect(readdirSync(path.join(home, "cache"))).toEqual(expect.arrayContaining(codeCaches));
  });
});

describe("the code cache of lllm's own bundle", () => {
  // bin/lllm.js loads the CLI's chunks (CommonJS, scripts/bundle.js) through the cache: V8 compiles a function when it
  // is first called, and Node keeps no compiled code of an ES module's functions between runs (Node 20 none at all,
  // 22+ the top level only), so every start compiled again the code it ran (a fifth of a 100-round run's CPU).
  it("holds every chunk a run loads, which the next run takes as it is, whatever other commands ran between", async () => {
    const home = path.join(dir, "bundle");
    const folder = path.join(home, "cache", "v8");
    const env = { LLLM_HOME: home, LLLM_CODE_CACHE: undefined };
    const scripted = path.join(EXAMPLE, "weather", "scripted", "paris-tokyo.yaml");
    const tactic = path.join(EXAMPLE, "weather", "tactics", "weather.yaml");
    const run = () => runCli(["run", tactic, "--model", `scripted:${scripted}`, "--input", "Paris and Tokyo?"], { env });
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    // This build's chunks that every run loads (its stamp lists them: a rebuild keeps older ones for CLIs running them).
    const stamp = JSON.parse(readFileSync(path.join(ROOT, "dist", "build-stamp.json"), "utf8")) as { bundle: string[] };
    const chunks = stamp.bundle.filter((name) => name === "cli.cjs" || /^(cli|tactic|run)-[\w-]+\.cjs$/.test(name)).map((name) => path.join(ROOT, "dist", "bundle", name));
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    // Keyed as the CLI keys them: started with no V8 flags (none on its command line, no NODE_OPTIONS), for `run`.
    const kept = chunks.map((chunk) => cacheFileOf(folder, chunk, [""], "run"));
    for (const [index, file] of kept.entries()) expect(existsSync(file), path.basename(chunks[index]!)).toBe(true);
    const inodes = kept.map((file) => statSync(file).ino);
    // Another command keeps its own (it calls other functions of the same chunks), and leaves the run's as they are.
    const validate = await runCli(["validate", tactic], { env });
    expect(validate.code, validate.stderr).toBe(0);
    const ofValidate = chunks.filter((chunk) => !path.basename(chunk).startsWith("run-"));
    for (const chunk of ofValidate) expect(existsSync(cacheFileOf(folder, chunk, [""], "validate")), path.basename(chunk)).toBe(true);
    // V8 takes the run's data as it is: nothing is compiled and written again (a rewrite is a new file, renamed in).
    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toBe(first.stderr);
    expect(kept.map((file) => statSync(file).ino)).toEqual(inodes);
  });

  // Under one key the first run of a build decided for the others which functions start compiled: after a first
  // `--no-log` run, every recorded run compiled the recorder and its journal again (8.1% more instructions for a
  // 100-round run than `--no-log`, against 6.0% with data of its own).
  it("keeps a run without its log, and a resume, apart from a recorded run (each calls code the others do not)", async () => {
    const home = path.join(dir, "kinds");
    const folder = path.join(home, "cache", "v8");
    const env = { LLLM_HOME: home, LLLM_CODE_CACHE: undefined, LLLM_LOG: undefined };
    const scripted = path.join(EXAMPLE, "weather", "scripted", "paris-tokyo.yaml");
    const tactic = path.join(EXAMPLE, "weather", "tactics", "weather.yaml");
    const run = (extra: string[], more: Record<string, string | undefined> = {}) => runCli(["run", tactic, "--model", `scripted:${scripted}`, "--input", "Paris and Tokyo?", ...extra], { env: { ...env, ...more } });
    const stamp = JSON.parse(readFileSync(path.join(ROOT, "dist", "build-stamp.json"), "utf8")) as { bundle: string[] };
    const chunks = stamp.bundle.filter((name) => name === "cli.cjs" || /^(cli|tactic|run)-[\w-]+\.cjs$/.test(name)).map((name) => path.join(ROOT, "dist", "bundle", name));
    const keptFor = (command: string) => chunks.map((chunk) => cacheFileOf(folder, chunk, [""], command));
    const unlogged = await run(["--no-log"]);
    expect(unlogged.code, unlogged.stderr).toBe(0);
    for (const file of keptFor("run --no-log")) expect(existsSync(file), file).toBe(true);
    for (const file of keptFor("run")) expect(existsSync(file), file).toBe(false);
    const inodes = keptFor("run --no-log").map((file) => statSync(file).ino);
    // A recorded run makes data of its own, and leaves the other's as it is.
    const recorded = await run([]);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stdout).toBe(unlogged.stdout);
    for (const file of keptFor("run")) expect(existsSync(file), file).toBe(true);
    // LLLM_LOG=0 is a run without its log too: it takes that data as it is.
    const offByEnv = await run([], { LLLM_LOG: "0" });
    expect(offByEnv.code, offByEnv.stderr).toBe(0);
    expect(keptFor("run --no-log").map((file) => statSync(file).ino)).toEqual(inodes);
    // A resume keeps its own (this one finds nothing to resume: it stops, its chunks' data written all the same).
    const resume = await runCli(["run", "--resume"], { env });
    expect(resume.code).not.toBe(0);
    expect(existsSync(cacheFileOf(folder, path.join(ROOT, "dist", "bundle", "cli.cjs"), [""], "run --resume"))).toBe(true);
  });

  it("is pruned of data no run has read for a month, when new data is written", async () => {
    const home = path.join(dir, "pruned");
    const folder = path.join(home, "cache", "v8");
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Left by a build or a Node that is gone: neither read nor written for 40 days.
    const stale = path.join(folder, `${"0".repeat(40)}.bin`);
    writeFileSync(stale, "old", { mode: 0o600 });
    const longAgo = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    utimesSync(stale, longAgo, longAgo);
    const result = await runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(folder).length).toBeGreaterThan(3);
  });
});

describe("the code cache of a file lllm requires compiled", () => {
  // Written when the process ends, it holds what the run called, not the top level alone: the next run compiles
  // neither (commander's parsing, the validators, the zod a tool used). Seen from outside: the data is larger than
  // V8's for the top level alone, and loading it again is accepted.
  it("holds the functions the run called, not only the top level (which is all Node 22's compile cache keeps)", async () => {
    const folder = path.join(dir, "functions");
    const file = path.join(folder, "called.cjs");
    mkdirSync(path.join(folder, "cache"), { recursive: true, mode: 0o700 });
    // A function with a large body, called after the top level has run.
    const body = Array.from({ length: 400 }, (_, index) => `  total += Math.sqrt(${index} + n) * ${index};`).join("\n");
    writeFileSync(file, `exports.work = function work(n) {\n  let total = 0;\n${body}\n  return total;\n};\n`);
    const codeCache = pathToFileURL(path.join(ROOT, "dist", "util", "codeCache.js")).href;
    const script = `const { useCodeCache, requireCompiled } = await import(${JSON.stringify(codeCache)});
const { createRequire } = await import("node:module");
useCodeCache(${JSON.stringify(path.join(folder, "cache"))});
const loaded = requireCompiled(${JSON.stringify(file)}, createRequire(import.meta.url));
console.log(loaded.work(2) > 0 ? "called" : "wrong");`;
    const once = () => spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(once().stdout).toBe("called\n");
    const [stored] = readdirSync(path.join(folder, "cache"));
    const data = readFileSync(path.join(folder, "cache", stored!));
    const topLevelOnly = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file }).createCachedData();
    expect(data.length).toBeGreaterThan(topLevelOnly.length * 2);
    // The next run loads it (V8 accepts it: the file is not written again) and gets the same result.
    const before = statSync(path.join(folder, "cache", stored!)).mtimeMs;
    expect(once().stdout).toBe("called\n");
    expect(statSync(path.join(folder, "cache", stored!)).mtimeMs).toBe(before);
  });
});
