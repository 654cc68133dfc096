import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isRunning, startCli, waitUntil, type RunningCli } from "../helpers/processTree.js";
import { BIN, emptyHome } from "../helpers/runCli.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// Each case starts the CLI and a command tool before the signal: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// Issue 29 item 12: after SIGTERM or Ctrl-C to `run`, `batch`, `test`, `chat` and `mcp serve`, a command tool's
// `setsid` grandchild survived with parent 1 (it leaves the process group that lllm killed). Every process a command
// tool started ends with lllm: its group, what is below it, and what carries its mark (found through /proc).

let cli: RunningCli | undefined;
let spawned: ChildProcessWithoutNullStreams | undefined;
/** Pids a test saw, killed afterwards whatever happened: an orphan must not outlive a failed test. */
let seen: number[] = [];

afterEach(() => {
  cli?.killTree();
  spawned?.kill("SIGKILL");
  for (const pid of seen) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
  cli = undefined;
  spawned = undefined;
  seen = [];
});

/**
 * A package with two command tools: `linger` runs until killed, with a child in its group and `setsid` grandchildren
 * out of it (one with the environment cleared); `daemon` starts a `setsid` grandchild and returns at once (its shell exits: the grandchild is orphaned).
 * Each writes the pids it started into `pids/`; `t.yaml` calls the one the model's turns name.
 */
function fixture(tool: "linger" | "daemon"): { dir: string; pids: string } {
  const pids = tempDir("lllm-pids-");
  const quiet = "</dev/null >/dev/null 2>&1";
  // `cleared`: out of the session and without the environment (so without the mark): found through its parent.
  const cleared = `env -i "$(command -v setsid)" "$(command -v sleep)" 600 ${quiet} & echo $! > ${pids}/cleared.pid`;
  const linger = `setsid sleep 600 ${quiet} & echo $! > ${pids}/orphan.pid; ${cleared}; sleep 600 ${quiet} & echo $! > ${pids}/child.pid; echo $$ > ${pids}/shell.pid; wait`;
  const daemon = `setsid sleep 600 ${quiet} & echo $! > ${pids}/orphan.pid; echo started`;
  const dir = tempTree({
    "lllm.yaml": "name: lingering\nversion: 0.1.0\n",
    "tools/linger.yaml": `name: linger\ndescription: Runs until stopped.\ncommand: [sh, -c, ${JSON.stringify(linger)}]\ntimeout: 600\nparameters: {}\n`,
    "tools/daemon.yaml": `name: daemon\ndescription: Starts a daemon.\ncommand: [sh, -c, ${JSON.stringify(daemon)}]\nparameters: {}\n`,
    "turns.yaml": `- tool_calls: [{name: ${tool}, arguments: {}}]\n- Done.\n`,
    "t.yaml": `name: t\npackages: [.]\nagent_configs:\n  - name: bot\n    model_name: scripted:turns.yaml\n    system_prompt: hi\n    tools: [${tool}]\n`,
    "items.jsonl": '"one"\n',
    "t.test.yaml": "tactic: t.yaml\ncases:\n  - name: lingers\n    input: go\n    assert:\n      - contains: Done\n",
  });
  return { dir, pids };
}

/** The pids the tool wrote, once it wrote all of `names`. */
async function startedPids(pids: string, names: string[], stderr: () => string): Promise<number[]> {
  const files = names.map((name) => path.join(pids, `${name}.pid`));
  const written = await waitUntil(() => files.every((file) => existsSync(file) && readFileSync(file, "utf8").trim() !== ""), 60_000);
  expect(written, `the tool did not start; stderr:\n${stderr()}`).toBe(true);
  const found = files.map((file) => Number(readFileSync(file, "utf8").trim()));
  seen.push(...found);
  return found;
}

async function expectAllEnded(pids: number[]): Promise<void> {
  expect(await waitUntil(() => pids.every((pid) => !isRunning(pid)), 15_000), `still running: ${pids.filter(isRunning).join(", ")}`).toBe(true);
}

const LINGERING = ["shell", "child", "orphan", "cleared"];

describe("a command tool's processes end with lllm", () => {
  it.each([
    ["run", "SIGTERM", 143],
    ["run", "SIGINT", 130],
    ["batch", "SIGTERM", 143],
    ["test", "SIGTERM", 143],
  ] as const)("`lllm %s`, stopped with %s (exit %i): the group, its child and the setsid grandchild", async (command, signal, code) => {
    const { dir, pids } = fixture("linger");
    const args = command === "run" ? ["run", "t.yaml", "--input", "go", "--no-log"] : command === "batch" ? ["batch", "t.yaml", "--inputs", "items.jsonl", "--no-log", "--quiet"] : ["test", "t.test.yaml", "--no-log"];
    cli = startCli(args, { cwd: dir });
    const started = await startedPids(pids, LINGERING, cli.stderr);
    process.kill(cli.pid, signal);
    expect(await cli.exit(), cli.stderr()).toBe(code);
    await expectAllEnded(started);
  });

  it("`lllm chat` from a pipe, stopped with SIGTERM (exit 143)", async () => {
    const { dir, pids } = fixture("linger");
    spawned = spawn(process.execPath, [BIN, "chat", "t.yaml", "--no-log"], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    spawned.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => spawned!.once("exit", (exitCode) => resolve(exitCode)));
    spawned.stdin.write("go\n"); // stdin stays open: the session waits for more
    const started = await startedPids(pids, LINGERING, () => stderr);
    spawned.kill("SIGTERM");
    expect(await exited, stderr).toBe(143);
    await expectAllEnded(started);
  });

  it("`lllm mcp serve` (stdio), stopped with SIGTERM during a call (exit 143)", async () => {
    const { dir, pids } = fixture("linger");
    spawned = spawn(process.execPath, [BIN, "mcp", "serve", dir], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    spawned.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => spawned!.once("exit", (exitCode) => resolve(exitCode)));
    const send = (message: Record<string, unknown>): void => void spawned!.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } } });
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/call", params: { name: "linger", arguments: {} } });
    const started = await startedPids(pids, LINGERING, () => stderr);
    spawned.kill("SIGTERM");
    expect(await exited, stderr).toBe(143);
    await expectAllEnded(started);
  });

  it("what a finished command tool left running (a setsid daemon) ends when `lllm run` does", async () => {
    const { dir, pids } = fixture("daemon");
    cli = startCli(["run", "t.yaml", "--input", "go", "--no-log"], { cwd: dir });
    const [orphan] = await startedPids(pids, ["orphan"], cli.stderr);
    expect(await cli.exit(), cli.stderr()).toBe(0);
    expect(cli.stdout()).toBe("Done.\n");
    await expectAllEnded([orphan!]);
  });
});
