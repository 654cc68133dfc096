// Code-action benchmarks (seed 002): a program's start per sandbox backend against `python3 -c pass`, the bridged
// tool call's round trip, and the prompt tokens the model reads for the salary question, code-action against the
// agent pattern. Run with `npm run bench -- --only codeaction`.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { compareStarts } from "./startTimes.js";

/** Each sandbox's program start: fresh kernel, prelude, `pass`, kill: what every code-action program pays. */
async function programStart(root, runs) {
  const { runProgram, ArtifactStore, approveNone } = await import(`${root}/dist/codeaction/index.js`);
  const { detectIsolation, detectGvisor } = await import(`${root}/dist/sandbox/index.js`);
  const backends = ["none", ...((await detectIsolation()).backend === "bwrap" ? ["bwrap"] : []), ...((await detectGvisor()).available ? ["gvisor"] : [])];
  const artifacts = new ArtifactStore(mkdtempSync(path.join(tmpdir(), "lllm-bench-")));
  const options = (backend) => ({ tools: [], maxToolCalls: 1, execTimeout: 30, isolation: { backend, workspaceMb: 64 }, maxOutputChars: 1000, approval: approveNone, artifacts, context: {} });
  await compareStarts({
    title: "Code-action program start: fresh sandbox, prelude, `pass`, kill",
    runs,
    label: "program",
    backends: ["none", "bwrap", "gvisor"].map((name) => ({ name, available: backends.includes(name) })),
    start: (backend) => runProgram("pass", options(backend)),
  });
  return { backends, options };
}

/** 1,000 bridged calls of a trivial tool in one program, timed inside Python: budget, validation, the pipe, the tool. */
async function roundTrip(root, backends, options) {
  const { runProgram } = await import(`${root}/dist/codeaction/index.js`);
  const { tool } = await import(`${root}/dist/index.js`);
  const echo = tool({ name: "echo", description: "Echo", parameters: { n: { type: "integer" } }, run: ({ n }) => ({ n }) });
  const code = "import time, statistics\ntimes = []\nfor i in range(1000):\n    t = time.perf_counter()\n    echo(n=i)\n    times.append(time.perf_counter() - t)\nprint(statistics.median(times) * 1e6)";
  console.log("\nBridged tool call round trip, 1,000 calls in one program (median per call)");
  for (const backend of backends) {
    const outcome = await runProgram(code, { ...options(backend), tools: [echo], maxToolCalls: 1000 });
    console.log(`  ${backend.padEnd(34)} ${Number(outcome.answer).toFixed(0).padStart(8)} µs`);
  }
}

/**
 * The salary question with N employees, through the CLI against the mock model server, summing the prompt tokens
 * the server reports (its estimate: 4 characters a token). Code-action: one model call. Agent pattern: the names,
 * then every lookup, either in one round of parallel calls (the loop's best case) or one lookup per round.
 */
async function promptTokens(root) {
  const { startMockOpenAIServer } = await import(`${root}/dist/testing/index.js`);
  const fixtures = path.join(root, "test", "fixtures", "codeaction");
  const program = "```python\ntotal = 0\nfor name in list_employees():\n    employee = get_employee(name=name)\n    if employee[\"department\"] == \"Engineering\":\n        total += employee[\"salary\"]\nprint(total)\n```";
  /** The model's next turn in the agent pattern, read from the dialog so far. */
  const agentTurn = (perRound) => (body) => {
    const messages = body.messages ?? [];
    const toolResults = messages.filter((message) => message.role === "tool");
    if (toolResults.length === 0) return { tool_calls: [{ name: "list_employees", arguments: {} }] };
    const names = JSON.parse(/\n---\n([\s\S]*)\n---$/.exec(toolResults[0].content)[1]);
    const done = toolResults.length - 1;
    if (done >= names.length) return "The combined salary is known.";
    const next = names.slice(done, perRound ? done + 1 : names.length);
    return { tool_calls: next.map((name) => ({ name: "get_employee", arguments: { name } })) };
  };
  async function measure(tactic, handler, count, extra = []) {
    const server = await startMockOpenAIServer({ handler });
    const home = mkdtempSync(path.join(tmpdir(), "lllm-bench-home-"));
    const child = spawn(process.execPath, [path.join(root, "bin", "lllm.js"), "run", path.join(fixtures, tactic), "--input", "What is the combined salary of everyone in Engineering?", "--json", ...extra], {
      env: { PATH: process.env.PATH, OPENAI_API_KEY: "bench", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_EMPLOYEES: String(count), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on("close", resolve));
    await server.close();
    if (code !== 0) throw new Error(`${tactic} with ${count} employees failed: ${stderr}`);
    return JSON.parse(stdout).usage;
  }
  console.log("\nPrompt tokens for the salary question (sum over model calls; mock server's estimate)");
  console.log("  employees   code-action (calls)   agent, one round (calls)   agent, a call per round (calls)");
  for (const count of [10, 50, 200]) {
    const action = await measure("bench.yaml", () => program, count);
    const batched = await measure("common.yaml", agentTurn(false), count, ["--max-steps", "5"]);
    const sequential = await measure("common.yaml", agentTurn(true), count, ["--max-steps", String(count + 5)]);
    const cell = (usage) => `${String(usage.prompt_tokens).padStart(9)} (${usage.llm_calls})`;
    console.log(`  ${String(count).padStart(9)}   ${cell(action).padEnd(20)}  ${cell(batched).padEnd(25)}  ${cell(sequential)}`);
  }
}

/** The suite `bench/run.js` runs as `codeaction`. */
export async function codeActionSuite({ root, runs }) {
  const { backends, options } = await programStart(root, runs);
  await roundTrip(root, backends, options);
  await promptTokens(root);
}
