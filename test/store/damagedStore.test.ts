import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ROOT, type CliResult } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli, cliInProcess, listRuns, listRunsInProcess } from "./storeTestHelpers.js";

const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");
const ANSWER = "It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n";
const PAGE = 4096;

let viewer: ChildProcess | undefined;
const restore: Array<() => void> = [];
afterEach(async () => {
  if (viewer && viewer.exitCode === null) {
    const closed = new Promise((resolve) => viewer!.on("close", resolve));
    viewer.kill("SIGTERM");
    await closed;
  }
  viewer = undefined;
  for (const undo of restore.splice(0).reverse()) undo();
  removeTempDirs();
});

const run = (home: string, input: string) => cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", input, "--no-stream"]);

// `cliInProcess` (this process) for the reads after which the test changes nothing on disk. The others stay spawns: the
// runs (one in this process would leave its spool file open in the home, for every later reader to merge from), a read
// before the log is damaged or made read-only (libsql's `close()` keeps the connection until its statements are
// collected, and the log is not on disk whole till then: its WAL is kept), and the reads of a damaged log (they check
// that nothing panicked, which libsql prints on the process's stderr itself, not through `process.stderr`).

/** libsql in the test process, to change a store as another program (or a newer lllm) would. */
function database(file: string) {
  const Database = createRequire(import.meta.url)("libsql") as typeof import("libsql");
  return new Database(file);
}

/** Overwrite the pages of `file` that `pick` chooses (by their bytes) with `fill`, from byte `from` of each. Returns how many. */
function damagePages(file: string, pick: (page: Buffer, index: number) => boolean, fill: number, from: number): number {
  const bytes = readFileSync(file);
  let count = 0;
  for (let index = 0; index * PAGE < bytes.length; index += 1) {
    const page = bytes.subarray(index * PAGE, (index + 1) * PAGE);
    if (!pick(page, index)) continue;
    page.fill(fill, from);
    count += 1;
  }
  writeFileSync(file, bytes);
  return count;
}

/** Start `lllm logs serve --port 0`; its address and token once it listens. */
function serve(home: string): Promise<{ url: string; token: string }> {
  viewer = spawn(process.execPath, [BIN, "logs", "serve", "--port", "0"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  return new Promise((resolve, reject) => {
    viewer!.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /the run viewer is at (http:\/\/127\.0\.0\.1:\d+\/)\?token=([A-Za-z0-9_-]+)/.exec(stderr);
      if (match) resolve({ url: match[1]!, token: match[2]! });
    });
    viewer!.on("close", (code) => reject(new Error(`lllm logs serve ended (${code}): ${stderr}`)));
  });
}

function expectRecoveryAdvice(result: CliResult, file: string): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).not.toContain("panicked");
  expect(result.stderr).not.toContain("internal error");
  expect(result.stderr).toContain(`the run log ${file} is damaged`);
  // The file once: the message names it, and the place adds no line (it read "error: FILE: the run log FILE is damaged").
  expect(result.stderr).toContain(`lllm: error: the run log ${file} is damaged`);
  expect(result.stderr).toContain(`mv ${file} ${file}.damaged`);
}

describe("a damaged run log", { timeout: 240_000 }, () => {
  it("text pages overwritten: logs, logs show and the viewer say so and how to recover, instead of aborting", async () => {
    const home = tempDir();
    // Long enough to fill overflow pages of its own.
    expect(await run(home, `Paris? ${"Z".repeat(30_000)}`)).toMatchObject({ code: 0, stdout: ANSWER });
    expect(await listRuns(home)).toHaveLength(1);
    const file = path.join(home, "logs.db");
    expect(existsSync(`${file}-wal`)).toBe(false);
    // Bytes that are not UTF-8 where the input's text was: SQLite's own check still passes.
    // (An overflow page starts with the number of the next one: kept, so that only the text is damaged.)
    expect(damagePages(file, (page) => page.subarray(4).every((byte) => byte === 0x5a), 0xff, 4)).toBeGreaterThan(0);

    expectRecoveryAdvice(await cli(home, ["logs"]), file);
    expectRecoveryAdvice(await cli(home, ["logs", "show", "last"]), file);
    const { url, token } = await serve(home);
    // The list shows each input's first 200 characters (an intact page); the whole run reads the damaged ones.
    const list = await fetch(`${url}api/runs?token=${token}`);
    expect(list.status).toBe(200);
    const [listed] = ((await list.json()) as { runs: Array<{ id: string }> }).runs;
    const runs = await fetch(`${url}api/runs/${listed!.id}?token=${token}`);
    expect(runs.status).toBe(500);
    expect(await runs.text()).toContain("is damaged");
    // Still serving.
    expect((await fetch(`${url}?token=${token}`)).status).toBe(200);
  });

  it("table pages overwritten: logs says so; a run still works, and is in the new log once the old one is moved aside", async () => {
    const home = tempDir();
    expect(await run(home, "first")).toMatchObject({ code: 0 });
    expect(await listRuns(home)).toHaveLength(1);
    const file = path.join(home, "logs.db");
    // Page 2 is the root of the runs table: no longer a table page.
    expect(damagePages(file, (_page, index) => index === 1, 0xff, 0)).toBe(1);

    expectRecoveryAdvice(await cli(home, ["logs"]), file);
    const second = await run(home, "second");
    expect(second).toMatchObject({ code: 0, stdout: ANSWER });
    expect(second.stderr).not.toContain("warning");
    expectRecoveryAdvice(await cli(home, ["logs"]), file);

    renameSync(file, `${file}.damaged`);
    expect((await listRunsInProcess(home)).map((entry) => [entry.input, entry.status])).toEqual([["second", "ok"]]);
  });
});

describe("a run log written by a newer lllm", { timeout: 240_000 }, () => {
  it("is read, never written: runs recorded meanwhile wait in the spool, and lllm logs says why", async () => {
    const home = tempDir();
    expect(await run(home, "before")).toMatchObject({ code: 0 });
    expect(await listRunsInProcess(home)).toHaveLength(1);
    const file = path.join(home, "logs.db");
    const newer = database(file);
    newer.pragma("user_version = 99");
    newer.close();

    expect(await run(home, "after")).toMatchObject({ code: 0, stdout: ANSWER });
    const listing = await cliInProcess(home, ["logs", "--json"]);
    expect(listing.code, listing.stderr).toBe(0);
    expect((JSON.parse(listing.stdout) as { runs: Array<{ input: string }> }).runs.map((entry) => entry.input)).toEqual(["before"]);
    expect(listing.stderr).toContain("written by a newer lllm (its schema is version 99");
    expect(listing.stderr).toContain("logs.spool");

    const check = database(file);
    expect(check.prepare("SELECT count(*) FROM runs").raw().get()).toEqual([1]);
    check.close();
    expect(readdirSync(path.join(home, "logs.spool"))).toHaveLength(1);
    const prune = await cliInProcess(home, ["logs", "prune", "--older-than", "0s"]);
    expect(prune.code, prune.stderr).toBe(1);
    expect(prune.stderr).toContain("cannot delete runs from the run log");
  });
});

describe("a run log you cannot write", { timeout: 240_000 }, () => {
  it("is still listed and shown", async () => {
    const home = tempDir();
    expect(await run(home, "readable")).toMatchObject({ code: 0 });
    expect(await listRuns(home)).toHaveLength(1);
    const file = path.join(home, "logs.db");
    // Another user's log, readable by all: as root, read it as nobody; else take the write bits away.
    const root = process.getuid?.() === 0;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, LLLM_HOME: home, NO_COLOR: "1" };
    if (root) {
      for (let folder = home; folder !== path.dirname(folder); folder = path.dirname(folder)) {
        const before = statSync(folder).mode & 0o7777;
        if ((before & 0o005) === 0o005) continue;
        chmodSync(folder, before | 0o005);
        restore.push(() => chmodSync(folder, before));
      }
      chmodSync(file, 0o644);
    } else {
      chmodSync(file, 0o444);
      chmodSync(home, 0o555);
      restore.push(() => chmodSync(home, 0o700));
    }
    const asReader = (args: string[]) =>
      new Promise<CliResult>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], ...(root ? { uid: 65534, gid: 65534 } : {}) });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const listing = await asReader(["logs", "--json"]);
    expect(listing.stderr).toBe("");
    expect(listing.code, listing.stderr).toBe(0);
    expect((JSON.parse(listing.stdout) as { runs: Array<{ input: string; status: string }> }).runs).toMatchObject([{ input: "readable", status: "ok" }]);
    const shown = await asReader(["logs", "show", "last"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("[user] readable");
  });
});
