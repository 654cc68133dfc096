import { spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/runCli.js";
import { AS_ROOT, NOBODY, openToOthers, runCliAs } from "../helpers/runCliAs.js";
import { tempDir } from "../helpers/tempTree.js";
import { cli, listRuns } from "./storeTestHelpers.js";

// Issue 29, points 2 and 13: this user's runs never go into a store another user owns, and a home this user may
// only read still shows the runs waiting in its spool. Only root can give a file to another user or run as one:
// CI runs the suite as root, so there these tests never skip; a developer's run as anyone else says it skipped.
const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");
const run = (input: string): string[] => ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", input, "--no-stream"];

const LATER_BAD = "01J0000000000000000000000Q";

/** A spool line that begins run `id` with `input` (a boolean is a bad value: the line is dropped). */
function beginLine(id: string, input: unknown) {
  return { begin: { id, startedAt: 1, tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input, vars: {}, models: [], lllmVersion: "0" } };
}

const spoolNames = (spool: string): string[] => readdirSync(spool).filter((name) => name.endsWith(".jsonl"));

/**
 * A home of nobody's that nobody may only read, with no logs.db and one spool file (nobody's) whose third line is
 * bad: \`lllm logs\` as nobody merges it into a store in memory and keeps the file (keep-files mode).
 */
function keptSpool(): { home: string; spool: string; file: string } {
  const home = path.join(tempDir(), "home");
  const spool = path.join(home, "logs.spool");
  mkdirSync(spool, { recursive: true, mode: 0o700 });
  const end = { endedAt: 3, status: "ok", exitCode: 0, errorCode: null, errorMessage: null, output: null, details: null, models: [], llmCalls: 0, cost: 0, durationMs: 2, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, reasoningTokens: 0 };
  const good = "01J0000000000000000000000N";
  // No close line, its writer this test's process: a file still being written, as a run going on leaves it.
  const lines = [{ spool: 3, pid: process.pid, host: hostname() }, beginLine(good, "fine"), beginLine("01J0000000000000000000000P", true), { finish: { run: good, end } }];
  const file = path.join(spool, `01J0000000000000000000000R-${process.pid}.jsonl`);
  writeFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(""), { mode: 0o600 });
  for (const entry of [home, spool, file]) chownSync(entry, NOBODY, NOBODY);
  chmodSync(home, 0o500); // its owner may read it, not write it
  return { home, spool, file };
}

describe.skipIf(!AS_ROOT && process.env.CI !== "true")("the run store of another user", { timeout: 240_000 }, () => {
  it("a logs.db another user owns is read, never written: the runs of this user stay in the spool, with a warning", async () => {
    expect(AS_ROOT, "this test needs root (it chowns the log to nobody); CI runs the suite as root").toBe(true);
    const home = tempDir();
    expect((await cli(home, run("before"))).code).toBe(0);
    expect(await listRuns(home)).toHaveLength(1); // merged: logs.db made
    const file = path.join(home, "logs.db");
    for (const name of readdirSync(home).filter((entry) => entry.startsWith("logs.db"))) chownSync(path.join(home, name), NOBODY, NOBODY);

    expect((await cli(home, run("after"))).code).toBe(0);
    const listing = await cli(home, ["logs", "--json"]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(JSON.parse(listing.stdout).runs.map((entry: { input: string }) => entry.input)).toEqual(["before"]);
    expect(listing.stderr).toContain(`lllm: warning: runs recorded in ${path.join(home, "logs.spool")} (1 file) are not shown: ${file} is not yours (it belongs to another user (uid ${NOBODY}))`);
  });

  it("a logs.spool/ another user owns gets no run: the run goes on, with a warning", async () => {
    expect(AS_ROOT, "this test needs root (it chowns the spool to nobody); CI runs the suite as root").toBe(true);
    const home = tempDir();
    const spool = path.join(home, "logs.spool");
    mkdirSync(spool, { mode: 0o700 });
    chownSync(spool, NOBODY, NOBODY);
    const result = await cli(home, run("x"));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n");
    expect(result.stderr).toContain(`lllm: warning: the run log ${path.join(home, "logs.db")} cannot be written (${spool}), the rest of this run is not logged: it belongs to another user (uid ${NOBODY})`);
    expect(readdirSync(spool)).toEqual([]);
  });

  it("lllm logs on a home this user may only read, whose runs are only in the spool, lists them and keeps the spool (13)", async () => {
    expect(AS_ROOT, "this test runs the CLI as nobody; CI runs the suite as root").toBe(true);
    const home = path.join(tempDir(), "home");
    mkdirSync(home, { mode: 0o700 });
    chownSync(home, NOBODY, NOBODY);
    const undo = openToOthers(path.dirname(home));
    try {
      const env = { PATH: process.env.PATH, HOME: home, LLLM_HOME: home, NO_COLOR: "1" };
      expect((await runCliAs(NOBODY, run("spooled"), { env })).code).toBe(0);
      expect(existsSync(path.join(home, "logs.db"))).toBe(false);
      chmodSync(home, 0o500); // its owner may read it, not write it
      const listing = await runCliAs(NOBODY, ["logs", "--json"], { env });
      expect(listing.stderr).not.toContain("ConnectionFailed");
      expect(listing.code, listing.stderr).toBe(0);
      expect(JSON.parse(listing.stdout).runs).toMatchObject([{ input: "spooled", status: "ok" }]);
      const shown = await runCliAs(NOBODY, ["logs", "show", "last"], { env });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain("[user] spooled");
      expect(readdirSync(path.join(home, "logs.spool"))).toHaveLength(1);
    } finally {
      chmodSync(home, 0o700);
      undo();
    }
  });

  it("a line dropped from a spool a read-only home keeps is said on the first lllm logs, not on the next; a new one is said once", async () => {
    expect(AS_ROOT, "this test runs the CLI as nobody; CI runs the suite as root").toBe(true);
    const { home, spool, file } = keptSpool();
    const undo = openToOthers(path.dirname(home));
    try {
      const env = { PATH: process.env.PATH, HOME: home, LLLM_HOME: home, NO_COLOR: "1" };
      const logs = async () => {
        const listing = await runCliAs(NOBODY, ["logs", "--json"], { env });
        expect(listing.code, listing.stderr).toBe(0);
        const inputs = (JSON.parse(listing.stdout) as { runs: Array<{ input: string }> }).runs.map((entry) => entry.input);
        return { inputs, dropped: listing.stderr.split("\n").filter((line) => line.includes("dropped")), stderr: listing.stderr };
      };
      const first = await logs();
      expect(first.inputs).toEqual(["fine"]);
      expect(first.dropped, first.stderr).toHaveLength(1);
      expect(first.dropped[0]).toContain(`${path.basename(file)}, line 3 (a \`begin\` line): a boolean where a text, a number or null belongs`);
      const second = await logs();
      expect(second.inputs).toEqual(["fine"]);
      expect(second.stderr).toBe("");
      // A line appended since is new: said once, the first one still not again.
      appendFileSync(file, `${JSON.stringify(beginLine(LATER_BAD, false))}\n`);
      const third = await logs();
      expect(third.inputs).toEqual(["fine"]);
      expect(third.dropped, third.stderr).toHaveLength(1);
      expect(third.dropped[0]).toContain("line 5 (a `begin` line)");
      expect((await logs()).stderr).toBe("");
      expect(spoolNames(spool)).toEqual([path.basename(file)]);
      expect(existsSync(path.join(spool, "dropped-said.json"))).toBe(true);
      // Writable again, the home's log takes the runs (the bad lines said once more: now dropped for good), and the
      // spool folder is left with nothing of the reads before.
      chmodSync(home, 0o700);
      const merged = await logs();
      expect(merged.inputs).toEqual(["fine"]);
      expect(merged.dropped, merged.stderr).toHaveLength(2);
      expect(existsSync(path.join(home, "logs.db"))).toBe(true);
      expect(existsSync(path.join(spool, "dropped-said.json"))).toBe(false);
    } finally {
      chmodSync(home, 0o700);
      undo();
    }
  });

  it("a line dropped from a spool kept where nothing may be written is said at each lllm logs, with how to clear it", async () => {
    expect(AS_ROOT, "this test runs the CLI as nobody; CI runs the suite as root").toBe(true);
    const { home, spool, file } = keptSpool();
    chmodSync(spool, 0o500);
    const undo = openToOthers(path.dirname(home));
    try {
      const env = { PATH: process.env.PATH, HOME: home, LLLM_HOME: home, NO_COLOR: "1" };
      for (let time = 0; time < 2; time += 1) {
        const listing = await runCliAs(NOBODY, ["logs", "--json"], { env });
        expect(listing.code, listing.stderr).toBe(0);
        expect(JSON.parse(listing.stdout).runs).toMatchObject([{ input: "fine" }]);
        const warnings = listing.stderr.split("\n").filter((line) => line.startsWith("lllm: warning:"));
        expect(warnings, listing.stderr).toHaveLength(2);
        expect(warnings[0]).toContain(`${path.basename(file)}, line 3`);
        expect(warnings[1]).toContain(`said again at each reading of the log`);
        expect(warnings[1]).toContain(`lllm logs`);
      }
    } finally {
      chmodSync(spool, 0o700);
      chmodSync(home, 0o700);
      undo();
    }
  });

  it("a spool file another user put in this user's spool is not merged: its runs are not this user's", async () => {
    expect(AS_ROOT, "this test needs root (it chowns a spool file to nobody); CI runs the suite as root").toBe(true);
    const home = tempDir();
    expect((await cli(home, run("planted"))).code).toBe(0);
    const spool = path.join(home, "logs.spool");
    const [planted] = readdirSync(spool);
    // As if another user had written it there (a spool folder made writable to others by hand).
    chownSync(path.join(spool, planted!), NOBODY, NOBODY);
    const listing = await cli(home, ["logs", "--json"]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(JSON.parse(listing.stdout).runs).toEqual([]);
    expect(listing.stderr).toContain(`left out of the run log, not yours: ${planted} (it belongs to another user (uid ${NOBODY}))`);
    expect(readdirSync(spool)).toEqual([planted]);
  });
});

describe("the spool's files", { timeout: 240_000 }, () => {
  it("a spool file anyone may write to is left out, unless LLLM_TRUSTED_PATHS trusts the home (a disk that shows every file so)", async () => {
    const home = tempDir();
    expect((await cli(home, run("shared"))).code).toBe(0);
    const spool = path.join(home, "logs.spool");
    const [file] = readdirSync(spool);
    chmodSync(path.join(spool, file!), 0o666);
    const refused = await cli(home, ["logs", "--json"]);
    expect(JSON.parse(refused.stdout).runs).toEqual([]);
    expect(refused.stderr).toContain(`left out of the run log, not yours: ${file} (anyone may write to it (mode 0666))`);
    expect(refused.stderr).toContain(`LLLM_TRUSTED_PATHS=${spool}`);
    const trusted = await cli(home, ["logs", "--json"], { env: { LLLM_TRUSTED_PATHS: home } });
    expect(trusted.stderr).toBe("");
    expect(JSON.parse(trusted.stdout).runs.map((entry: { input: string }) => entry.input)).toEqual(["shared"]);
  });

  it("a FIFO named as a spool file does not hang lllm logs", async () => {
    const home = tempDir();
    const spool = path.join(home, "logs.spool");
    mkdirSync(spool, { mode: 0o700 });
    const fifo = path.join(spool, `${"0".repeat(25)}A-1.jsonl`);
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // Opened to read, a FIFO waits for a writer: the listing never came.
    const listing = await cli(home, ["logs", "--json"]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(JSON.parse(listing.stdout).runs).toEqual([]);
  });
});
