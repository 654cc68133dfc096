import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FIXTURE } from "../mcp/helpers.js";
import { commandName, isRunning, processTree, startCli, waitUntil, type RunningCli } from "../helpers/processTree.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// Each case starts the CLI, most of them with a sandboxed kernel or MCP servers, before the signal: on a busy
// machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// lllm must exit within seconds of finishing, of Ctrl-C or of SIGTERM, whatever its children do, and leave no
// process and no kernel folder behind. Each test waits on the CLI's exit event with a generous bound (15 s): a
// hang shows as "still running", never as a slow pass.

let dir: string;
let cli: RunningCli | undefined;
/** Pids seen during a test, killed afterwards whatever happened (an orphan must not outlive a failed test). */
let seen: number[] = [];

beforeEach(() => {
  dir = tempDir("lllm-signals-");
  seen = [];
});

afterEach(() => {
  cli?.killTree();
  cli = undefined;
  for (const pid of seen) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A tactic with one agent and one stdio MCP server run with `serverArgs`; the model's turns are scripted. */
function mcpTactic(turns: unknown[], serverCommand: { command: string; args: string[] }): string[] {
  writeFileSync(path.join(dir, "turns.json"), JSON.stringify(turns));
  writeFileSync(
    path.join(dir, "t.yaml"),
    `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - ${JSON.stringify({ name: "shop", ...serverCommand })}\n`,
  );
  return ["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`];
}

function nodeFixture(...flags: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [FIXTURE, ...flags] };
}

/**
 * The processes below the CLI, once `ready` holds for them (the CLI starts, and then a kernel or a server: on a busy
 * machine that takes far longer than the bounds on its exit); remembered for clean-up.
 */
async function descendantsWhen(ready: (pids: number[]) => boolean): Promise<number[]> {
  let pids: number[] = [];
  const ok = await waitUntil(() => {
    pids = processTree(cli!.pid).slice(1);
    return ready(pids);
  }, 60_000);
  seen.push(...pids);
  expect(ok, `processes below the CLI: ${pids.map((pid) => `${pid} ${commandName(pid)}`).join(", ")}\nstderr: ${cli!.stderr()}`).toBe(true);
  return pids;
}

const hasSleep = (pids: number[]): boolean => pids.some((pid) => commandName(pid) === "sleep");

function kernelFolders(): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("lllm-kernel-"));
}

describe("an MCP server whose child inherits its stdio", () => {
  it.each([
    ["started directly", (pidsFile: string) => nodeFixture("--spawn-child", "--pids", pidsFile)],
    // bash stays the server's parent (a second command keeps it from exec'ing node): the group must be killed.
    // --norc: bash reads ~/.bashrc when its stdin is a socket (as MCP's stdio is), and a user's rc file (pyenv's
    // `rehash`, with a lock a killed run leaves behind) must not decide whether this test passes.
    ["through a bash -c wrapper", (pidsFile: string) => ({ command: "bash", args: ["--norc", "--noprofile", "-c", `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)} --spawn-child --pids ${JSON.stringify(pidsFile)}; exit $?`] })],
  ])("does not keep lllm alive after the answer (%s)", async (_name, server) => {
    const pidsFile = path.join(dir, "pids");
    cli = startCli(mcpTactic([{ tool_calls: [{ name: "count", arguments: {} }] }, "Done."], server(pidsFile)));
    expect(await waitUntil(() => existsSync(pidsFile) && readFileSync(pidsFile, "utf8").includes(" "), 60_000), cli.stderr()).toBe(true);
    const pids = readFileSync(pidsFile, "utf8").split(" ").map(Number);
    seen.push(...pids);
    expect(await cli.exit()).toBe(0);
    expect(cli.stdout()).toBe("Done.\n");
    expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000)).toBe(true);
  });
});

describe("an MCP result over the size limit", () => {
  it("is reported to the model as too large, naming the server and tool, and the server stays usable", async () => {
    const args = mcpTactic([{ tool_calls: [{ name: "big", arguments: { bytes: 11 * 1024 * 1024 } }] }, { tool_calls: [{ name: "count", arguments: {} }] }, "Done."], nodeFixture());
    cli = startCli([...args, "--json"]);
    expect(await cli.exit(60_000)).toBe(0);
    const report = JSON.parse(cli.stdout()) as { output: string; tool_calls: Array<{ name: string; error: string | null; result: unknown }> };
    expect(report.output).toBe("Done.");
    const [big, count] = report.tool_calls;
    expect(big!.error).toContain("MCP server `shop`: the result of `big` is over the size limit");
    expect(big!.error).not.toContain("closed the connection");
    expect(count!.error).toBeNull();
  }, 90_000);
});

describe("signals during an MCP call", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s stops the run, exits %i, and kills a server that ignores SIGTERM and its child", async (signal, code) => {
    const mark = path.join(dir, "calling");
    cli = startCli(mcpTactic([{ tool_calls: [{ name: "hang", arguments: { mark } }] }, "never"], nodeFixture("--ignore-sigterm", "--spawn-child")), { env: { TMPDIR: dir } });
    expect(await waitUntil(() => existsSync(mark), 60_000), cli.stderr()).toBe(true);
    const pids = await descendantsWhen(hasSleep);
    process.kill(cli.pid, signal);
    expect(await cli.exit()).toBe(code);
    expect(cli.stdout()).toBe("");
    expect(cli.stderr()).toContain(signal === "SIGINT" ? "interrupted" : "SIGTERM");
    expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000), `left: ${pids.filter(isRunning)}`).toBe(true);
  });
});

describe("signals during a long run_python cell", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s ends the cell at once, exits %i, and removes the kernel and its folder", async (signal, code) => {
    const code_ = 'import subprocess\nsubprocess.run(["sleep", "600"])\nprint("finished")';
    writeFileSync(path.join(dir, "turns.json"), JSON.stringify([{ tool_calls: [{ name: "run_python", arguments: { code: code_ } }] }, "never"]));
    writeFileSync(
      path.join(dir, "t.yaml"),
      `packages: [${JSON.stringify(path.join(ROOT, "packages-example/weather"))}]\nglobal: {model_name: gpt-test}\nagent_configs:\n  - name: analyst\n    system_prompt: hi\n    proxy: {activate_proxies: [weather], exec_env: interpreter, use_cache: false, timeout: 3600}\n`,
    );
    cli = startCli(["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`], { env: { TMPDIR: dir } });
    const pids = await descendantsWhen(hasSleep);
    expect(kernelFolders()).not.toEqual([]);
    process.kill(cli.pid, signal);
    expect(await cli.exit()).toBe(code);
    expect(cli.stdout()).toBe("");
    expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000), `left: ${pids.filter(isRunning)}`).toBe(true);
    expect(kernelFolders()).toEqual([]);
  });
});

describe("signals during a notebook cell", () => {
  it("SIGINT ends a long cell at once, exits 130, and removes the kernel and its folder", async () => {
    writeFileSync(path.join(dir, "turns.json"), JSON.stringify(['<python_cell>\nimport subprocess\nsubprocess.run(["sleep", "600"])\n</python_cell>', "<TERMINATE_NOTEBOOK>"]));
    writeFileSync(
      path.join(dir, "t.yaml"),
      `tactic_type: notebook\npackages: [${JSON.stringify(path.join(ROOT, "packages-example/weather"))}]\nglobal: {model_name: gpt-test}\nagent_configs:\n  - name: analyst\n    system_prompt: hi\n    proxy: {activate_proxies: [weather], use_cache: false, timeout: 3600}\n`,
    );
    cli = startCli(["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`], { env: { TMPDIR: dir } });
    const pids = await descendantsWhen(hasSleep);
    process.kill(cli.pid, "SIGINT");
    expect(await cli.exit()).toBe(130);
    expect(cli.stdout()).toBe("");
    expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000), `left: ${pids.filter(isRunning)}`).toBe(true);
    expect(kernelFolders()).toEqual([]);
  });
});

describe("lllm exec", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s during code with --timeout 0 exits %i and leaves nothing behind", async (signal, code) => {
    writeFileSync(path.join(dir, "code.py"), 'import subprocess\nsubprocess.run(["sleep", "600"])\n');
    cli = startCli(["exec", "--file", path.join(dir, "code.py"), "--timeout", "0"], { env: { TMPDIR: dir } });
    const pids = await descendantsWhen(hasSleep);
    process.kill(cli.pid, signal);
    expect(await cli.exit()).toBe(code);
    expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 5000), `left: ${pids.filter(isRunning)}`).toBe(true);
    expect(kernelFolders()).toEqual([]);
  });

  it("output over the 64 MB a result can carry is cut with a note, not reported as a timeout", async () => {
    writeFileSync(path.join(dir, "code.py"), 'import sys\nsys.stdout.write("y" * 70_000_000)\nprint("END")\n');
    cli = startCli(["exec", "--sandbox", "none", "--file", path.join(dir, "code.py"), "--timeout", "0"], { env: { TMPDIR: dir } });
    expect(await cli.exit(60_000)).toBe(1);
    expect(await cli.stdoutEnded(60_000)).toBe("ended");
    const stdout = cli.stdout();
    // Only the ends of 64 MB go into an assertion's message.
    expect(stdout.slice(0, 4)).toBe("yyyy");
    expect(stdout.slice(-300)).toContain("output cut");
    expect(stdout.length).toBeLessThanOrEqual(64 * 2 ** 20);
    expect(stdout.slice(-300)).not.toContain("TimeoutError");
    expect(cli.stderr()).toContain("the output was cut at 64 MB");
  }, 90_000);
});
