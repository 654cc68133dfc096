import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, waitForFile, type DurableProject, type WireMessage } from "../helpers/durableProject.js";
import { waitUntil, type RunningCli } from "../helpers/processTree.js";
import { writeTree } from "../helpers/tempTree.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";

vi.setConfig({ testTimeout: 240_000 });

// Durable runs of a tactic that uses another as a tool, and of a code-action program: killed inside the nested
// tactic or inside the program, resumed, they run nothing twice that is not idempotent and give the uninterrupted
// run's answer and cost. A nested run resumes inside its parent (its model and tool calls answered from the parent
// run's journal); a program runs again from its start, its calls with recorded outcomes answered from the journal.

interface RunJson {
  output: string;
  cost: number;
  usage: { llm_calls: number };
  resumed?: { attempt: number; replayed_model_calls: number; replayed_tool_calls: number };
}

const PARTS = 3;
const STEPS = 4;
const usage = { prompt_tokens: 500, completion_tokens: 30 };
const text = (message: WireMessage | undefined): string => (typeof message?.content === "string" ? message.content : "");

/** The boss runs `sub` on each part; the helper (inside `sub`) takes STEPS tool rounds per part. */
function nestedAnswer(messages: WireMessage[]): ScriptedTurn | undefined {
  const rounds = messages.filter((message) => message.role === "tool").length;
  if (text(messages[0]).includes("Help with one part")) {
    const part = Number(/part (\d+)/.exec(text(messages.find((message) => message.role === "user")))?.[1]);
    if (rounds >= STEPS) return { text: `part ${part} done`, usage };
    const n = part * 10 + rounds;
    return { tool_calls: [{ id: `call_helper_${part}_${rounds}`, name: rounds % 2 === 0 ? "note" : "look", arguments: { n } }], usage };
  }
  if (text(messages[0]).includes("Run the parts")) {
    if (rounds >= PARTS) return { text: `all done: ${messages.filter((message) => message.role === "tool").map((message) => /part \d+ done/.exec(text(message))?.[0] ?? "?").join(", ")}`, usage };
    // Two copies of the helper at once: parts 0 and 1 in one answer, then part 2.
    if (text(messages[0]).includes("two at once")) {
      if (rounds === 0) return { tool_calls: [0, 1].map((part) => ({ id: `call_boss_${part}`, name: "helper", arguments: { input: `part ${part}` } })), usage };
      return { tool_calls: [{ id: "call_boss_2", name: "helper", arguments: { input: "part 2" } }], usage };
    }
    // With the agent itself as a tool (`agent:helper`), or the tactic `sub` around it.
    const call = text(messages[0]).includes("with the agent") ? { name: "helper", arguments: { input: `part ${rounds}` } } : { name: "sub", arguments: { task: `part ${rounds}` } };
    return { tool_calls: [{ id: `call_boss_${rounds}`, ...call }], usage };
  }
  if (text(messages[0]).includes("Write programs")) return { text: "```python\n" + PROGRAM + "\n```", usage };
  return undefined;
}

const PROGRAM = `total = 0
for n in range(30):
    if n % 3 == 0:
        note(n=n)
    else:
        total += int(look(n=n).split()[1])
final_answer(f"total {total}")`;

/** A tactic whose boss uses the agent `helper` as a tool, as its system prompt says. */
function helperTactic(name: string, boss: string, url: string): string {
  return `name: ${name}
packages: [./pkg]
prompt: "{input}"
global:
  model_name: mock-model
  invoker_config: {base_url: "${url}", api_key_env: MOCK_KEY}
agent_configs:
  - name: boss
    system_prompt: ${boss}
    tools: [agent:helper]
  - name: helper
    description: Does one part of the work.
    system_prompt: Help with one part.
    tools: [note, look]
`;
}

async function project(): Promise<DurableProject> {
  const made = await durableProject({ answer: nestedAnswer });
  writeTree(made.dir, {
    "pkg/tactics/sub.yaml": `name: sub
description: Do one part of the work.
prompt: "{input}"
global:
  model_name: mock-model
  invoker_config: {base_url: "${made.server.url}", api_key_env: MOCK_KEY}
agent_configs:
  - name: helper
    system_prompt: Help with one part.
    tools: [note, look]
`,
    "nested.yaml": `name: nested
packages: [./pkg]
prompt: "{input}"
global:
  model_name: mock-model
  invoker_config: {base_url: "${made.server.url}", api_key_env: MOCK_KEY}
agent_configs:
  - name: boss
    system_prompt: Run the parts.
    tools: [durable.tactics:sub]
`,
    "agents.yaml": helperTactic("agents", "Run the parts with the agent.", made.server.url),
    "pair.yaml": helperTactic("pair", "Run the parts with the agent, two at once.", made.server.url),
    "program.yaml": `name: program
tactic_type: code-action
packages: [./pkg]
prompt: "{input}"
global:
  model_name: mock-model
  invoker_config: {base_url: "${made.server.url}", api_key_env: MOCK_KEY}
agent_configs:
  - name: coder
    system_prompt: Write programs.
    tools: [note, look]
`,
  });
  return made;
}

function counts(calls: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const call of calls) map.set(call, (map.get(call) ?? 0) + 1);
  return map;
}

/** Each `note` call exactly once (but those in `rerun`), each `look` once or twice. */
function expectOnce(calls: string[], expected: string[], rerun: string[] = []): void {
  const byCall = counts(calls);
  expect([...byCall.keys()].sort()).toEqual([...new Set(expected)].sort());
  for (const [call, times] of byCall) {
    if (call.startsWith("note") && !rerun.includes(call)) expect(times, call).toBe(1);
    else expect(times, call).toBeLessThanOrEqual(2);
  }
}

async function reference(tactic: string): Promise<{ json: RunJson; calls: string[]; requests: number }> {
  const made = await project();
  try {
    const result = await made.run(["run", made.tactic(tactic), "--input", "go", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    return { json: JSON.parse(result.stdout) as RunJson, calls: made.toolCalls(), requests: made.modelRequests() };
  } finally {
    await made.close();
  }
}

let current: DurableProject | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** SIGKILL the first attempt where it stands, and resume the run to its end: the resume's `--json`. */
async function killAndResume(first: RunningCli): Promise<RunJson> {
  process.kill(first.pid, "SIGKILL");
  await first.exit();
  current!.clearMarks();
  const resumed = await current!.run(["run", "--resume", "--json"]);
  expect(resumed.code, resumed.stderr).toBe(0);
  return JSON.parse(resumed.stdout) as RunJson;
}

describe.each([
  ["a tactic used as a tool", "nested"],
  ["an agent used as a tool", "agents"],
])("%s, killed inside its run", (_what, tactic) => {
  it.each([
    ["during the nested agent's model call", (made: DurableProject) => made.holdModel((messages) => text(messages[0]).includes("Help with one part") && text(messages.find((message) => message.role === "user")).includes("part 1") && messages.filter((message) => message.role === "tool").length === 2)],
    ["during the nested agent's idempotent tool call", (made: DurableProject) => made.blockTool("look", 21)],
  ])("%s: resumes inside the parent", async (_point, stop) => {
    const uninterrupted = await reference(tactic);
    expect(uninterrupted.json.output).toBe("all done: part 0 done, part 1 done, part 2 done");
    current = await project();
    stop(current);
    const first = current.start(["run", current.tactic(tactic), "--input", "go"]);
    expect(await waitUntil(() => current!.holding() || current!.toolCalls().includes("look 21"), 120_000), first.stderr()).toBe(true);
    if (!current.holding()) expect(await waitForFile(path.join(current.dir, "blocked"))).toBe(true);
    const inFlight = current.holding() ? 1 : 0;
    const json = await killAndResume(first);
    expect(json.output).toBe(uninterrupted.json.output);
    expect(json.cost).toBeCloseTo(uninterrupted.json.cost, 10);
    expect(json.usage.llm_calls).toBe(uninterrupted.json.usage.llm_calls);
    expectOnce(current.toolCalls(), uninterrupted.calls);
    expect(current.modelRequests()).toBe(uninterrupted.requests + inFlight);
    // The first part's run was replayed inside the parent, not asked again.
    expect(json.resumed!.replayed_model_calls).toBeGreaterThanOrEqual(1 + STEPS + 1);
  });
});

describe("an agent used as a tool, two copies of it at once", () => {
  it("records each copy's calls with its own messages, and resumes after a kill inside the second copy", async () => {
    const uninterrupted = await reference("pair");
    expect(uninterrupted.json.output).toBe("all done: part 0 done, part 1 done, part 2 done");
    current = await project();
    // Both copies held at their third model request (after two tool results): killed there, neither is inside a
    // tool call (the other copy's `note` cut short would stop the resume, as it should).
    const third = (messages: WireMessage[]): boolean => text(messages[0]).includes("Help with one part") && /part [01]/.test(text(messages.find((message) => message.role === "user"))) && messages.filter((message) => message.role === "tool").length === 2;
    current.holdEvery(third);
    const first = current.start(["run", current.tactic("pair"), "--input", "go"]);
    expect(await waitUntil(() => current!.heldCount() === 2, 120_000), first.stderr()).toBe(true);
    current.holdEvery(undefined);
    const json = await killAndResume(first);
    expect(json.output).toBe(uninterrupted.json.output);
    expect(json.cost).toBeCloseTo(uninterrupted.json.cost, 10);
    expect(json.usage.llm_calls).toBe(uninterrupted.json.usage.llm_calls);
    expectOnce(current.toolCalls(), uninterrupted.calls);
    // Asked again: the two requests held.
    expect(current.modelRequests()).toBe(uninterrupted.requests + 2);
    // Each of the helper's recorded calls holds its own copy's dialog: its task, and its own tool results.
    const shown = await current.run(["logs", "show", "last", "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    const calls = (JSON.parse(shown.stdout) as { model_calls: Array<{ agent: string; messages: WireMessage[] }> }).model_calls.filter((call) => call.agent === "helper");
    expect(calls).toHaveLength(3 * (STEPS + 1));
    for (const call of calls) {
      const part = /part (\d)/.exec(text(call.messages.find((message) => message.role === "user")))?.[1];
      expect(part, JSON.stringify(call.messages)).toBeDefined();
      // `note n` answers `noted n`, `look n` `value 7n`; the part's calls have n = 10 × part + round.
      const results = call.messages.filter((message) => message.role === "tool").map((message) => {
        const found = /(noted|value) (\d+)/.exec(text(message));
        return found ? Number(found[2]) / (found[1] === "value" ? 7 : 1) : NaN;
      });
      expect(results.every((n) => Math.floor(n / 10) === Number(part)), JSON.stringify(call.messages)).toBe(true);
    }
    // The transcript shows each copy's task (what a copy was sent is new beside the other copy's call before it).
    const transcript = await current.run(["logs", "show", "last"]);
    for (const part of [0, 1, 2]) expect(transcript.stdout).toContain(`[user] part ${part}`);
  });
});

describe("a code-action program, killed while it runs", () => {
  const program = Array.from({ length: 30 }, (_, n) => `${n % 3 === 0 ? "note" : "look"} ${n}`);

  it("runs again from its start, its recorded calls answered from the journal, the call cut short run again (idempotent)", async () => {
    const uninterrupted = await reference("program");
    expect(uninterrupted.json.output).toBe(`total ${program.filter((call) => call.startsWith("look")).reduce((sum, call) => sum + Number(call.split(" ")[1]) * 7, 0)}`);
    expect(uninterrupted.calls).toEqual(program);
    current = await project();
    current.blockTool("look", 13);
    const first = current.start(["run", current.tactic("program"), "--input", "go"]);
    expect(await waitForFile(path.join(current.dir, "blocked"), 120_000), first.stderr()).toBe(true);
    const json = await killAndResume(first);
    expect(json.output).toBe(uninterrupted.json.output);
    expect(json.cost).toBeCloseTo(uninterrupted.json.cost, 10);
    expectOnce(current.toolCalls(), program);
    expect(counts(current.toolCalls()).get("look 13")).toBe(2);
    // The program was the model's one answer: replayed, not asked again.
    expect(current.modelRequests()).toBe(1);
    expect(json.resumed).toEqual({ attempt: 2, replayed_model_calls: 1, replayed_tool_calls: 13 });
  });

  it("stops before a call cut short whose tool is not idempotent, and runs it again with --rerun-unknown", async () => {
    current = await project();
    current.blockTool("note", 15);
    const first = current.start(["run", current.tactic("program"), "--input", "go"]);
    expect(await waitForFile(path.join(current.dir, "blocked"), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    current.clearMarks();
    const refused = await current.run(["run", "--resume"]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("the run stopped during a call of `note` (agent `coder`, arguments {\"n\":15})");
    const resumed = await current.run(["run", "--resume", "--rerun-unknown"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expectOnce(current.toolCalls(), program, ["note 15"]);
    expect(counts(current.toolCalls()).get("note 15")).toBe(2);
  });
});

describe("a code-action program, stopped by Ctrl-C during a call that ends after it", () => {
  const program = Array.from({ length: 30 }, (_, n) => `${n % 3 === 0 ? "note" : "look"} ${n}`);

  it("keeps that call's outcome: the program runs again from its start, that call answered from the journal, nothing run twice", async () => {
    current = await project();
    current.outlastStop("note", 15);
    const first = current.start(["run", current.tactic("program"), "--input", "go"]);
    expect(await waitForFile(path.join(current.dir, "blocked"), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGINT");
    expect(await first.exit(60_000), first.stderr()).toBe(130);
    expect(existsSync(path.join(current.dir, "outlasted")), first.stderr()).toBe(true);
    expect(current.toolCalls()).toEqual(program.slice(0, 16));
    current.clearMarks();
    const resumed = await current.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(`total ${program.filter((call) => call.startsWith("look")).reduce((sum, call) => sum + Number(call.split(" ")[1]) * 7, 0)}`);
    // Its first 16 calls answered from the journal, `note 15` among them: every call ran once.
    expect(json.resumed).toEqual({ attempt: 2, replayed_model_calls: 1, replayed_tool_calls: 16 });
    expect(current.toolCalls()).toEqual(program);
  });
});
