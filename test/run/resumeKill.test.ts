import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { durableProject, waitForFile, type DurableProject } from "../helpers/durableProject.js";
import { waitUntil } from "../helpers/processTree.js";

vi.setConfig({ testTimeout: 240_000 });

// The kill matrix of durable runs: the real CLI is SIGKILLed at chosen points of a 30-round run (waited on as events:
// the mock server holding a model request, a tool blocking in its call, a tool killing its process right after its
// call), then resumed until done. Against an uninterrupted run of the same tactic: the same answer, every tool that
// is not idempotent run exactly once, idempotent ones at most twice, the model called once per round across
// attempts (plus at most the request in flight at each kill), and the same cost.

interface RunJson {
  output: string;
  cost: number;
  run_id: string;
  usage: { llm_calls: number; prompt_tokens: number; completion_tokens: number };
  resumed?: { attempt: number; replayed_model_calls: number; replayed_tool_calls: number };
}

const ROUNDS = 30;
let reference: { output: string; cost: number; llmCalls: number };

beforeAll(async () => {
  const project = await durableProject({ rounds: ROUNDS });
  try {
    const result = await project.run(["run", project.tactic(), "--input", "go", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as RunJson;
    reference = { output: json.output, cost: json.cost, llmCalls: json.usage.llm_calls };
    expect(project.modelRequests()).toBe(ROUNDS + 1);
    expect(project.toolCalls()).toHaveLength(ROUNDS);
  } finally {
    await project.close();
  }
});

let project: DurableProject;
afterAll(async () => {
  await project?.close();
});

/** Every call of each tool, by `name n`, across attempts. */
function counts(calls: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const call of calls) map.set(call, (map.get(call) ?? 0) + 1);
  return map;
}

function expectToolCounts(calls: string[], rerun: readonly string[] = []): void {
  const byCall = counts(calls);
  for (let round = 0; round < ROUNDS; round += 1) {
    const call = `${round % 3 === 0 ? "note" : "look"} ${round}`;
    const times = byCall.get(call) ?? 0;
    if (call.startsWith("note") && !rerun.includes(call)) expect(times, call).toBe(1);
    else expect(times, call).toBeGreaterThanOrEqual(1);
    expect(times, call).toBeLessThanOrEqual(2);
  }
}

describe("a 30-round run killed and resumed", () => {
  it("killed during a model call: resumed, it replays the recorded rounds and asks the model only what it never answered", async () => {
    project = await durableProject({ rounds: ROUNDS });
    project.holdModel(12);
    const first = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitUntil(() => project.holding(), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    expect(project.modelRequests()).toBe(13);
    project.clearMarks();
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(reference.output);
    expect(json.cost).toBeCloseTo(reference.cost, 10);
    expect(json.usage.llm_calls).toBe(reference.llmCalls);
    expect(json.resumed).toEqual({ attempt: 2, replayed_model_calls: 12, replayed_tool_calls: 12 });
    // 13 before the kill (the 13th held, never answered), 19 after it: round 12's request again, then 13 to 30.
    expect(project.modelRequests()).toBe(13 + 19);
    expectToolCounts(project.toolCalls());
    expect(project.toolCalls()).toHaveLength(ROUNDS);
    expect(resumed.stderr).toContain("resuming run");
    expect(path.isAbsolute(project.dir)).toBe(true);
    await project.close();
  });

  it("killed during an idempotent tool call: resumed, it runs that call again and no other", async () => {
    project = await durableProject({ rounds: ROUNDS });
    await project.crashInTool("look", 13);
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(reference.output);
    expect(json.cost).toBeCloseTo(reference.cost, 10);
    expect(counts(project.toolCalls()).get("look 13")).toBe(2);
    expectToolCounts(project.toolCalls());
    expect(project.modelRequests()).toBe(ROUNDS + 1);
    await project.close();
  });

  it("killed during a call of a tool that is not idempotent: the resume stops before it, naming it, and runs it again only with --rerun-unknown", async () => {
    project = await durableProject({ rounds: ROUNDS });
    await project.crashInTool("note", 15);
    const requestsBefore = project.modelRequests();
    const refused = await project.run(["run", "--resume"]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("the run stopped during a call of `note` (agent `worker`, arguments {\"n\":15})");
    expect(refused.stderr).toContain("--rerun-unknown");
    // Refused before anything ran: no model call, no tool call.
    expect(project.modelRequests()).toBe(requestsBefore);
    expect(counts(project.toolCalls()).get("note 15")).toBe(1);
    const resumed = await project.run(["run", "--resume", "--rerun-unknown", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(reference.output);
    expect(json.cost).toBeCloseTo(reference.cost, 10);
    expect(counts(project.toolCalls()).get("note 15")).toBe(2);
    expectToolCounts(project.toolCalls(), ["note 15"]);
    expect(project.modelRequests()).toBe(ROUNDS + 1);
    await project.close();
  });

  it("killed between a tool call and the next model call: nothing is run or asked twice", async () => {
    project = await durableProject({ rounds: ROUNDS });
    project.killAfter("note", 21);
    const first = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await first.exit(120_000)).toBe("SIGKILL");
    // Killed on the event loop's next turn after the call returned: its outcome is recorded (a `note` cut short would
    // stop the resume), and the next request is at most on its way.
    const inFlight = project.modelRequests() - 22;
    expect(inFlight).toBeGreaterThanOrEqual(0);
    expect(inFlight).toBeLessThanOrEqual(1);
    project.clearMarks();
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(reference.output);
    expect(json.cost).toBeCloseTo(reference.cost, 10);
    expect(json.resumed).toEqual({ attempt: 2, replayed_model_calls: 22, replayed_tool_calls: 22 });
    expect(counts(project.toolCalls()).get("note 21")).toBe(1);
    expectToolCounts(project.toolCalls());
    expect(project.toolCalls()).toHaveLength(ROUNDS);
    expect(project.modelRequests()).toBe(ROUNDS + 1 + inFlight);
    await project.close();
  });

  // Random points, from a seed (printed with a failure): three kills in one run, each at a random later round, during
  // its model call, during its tool call (a `look`: a `note` cut short needs --rerun-unknown, tested above), or right
  // after its tool call. Each attempt is resumed until the run is done.
  it.each([11, 29])("killed three times at random points (seed %i): each resume goes on from where the last stopped", async (seed) => {
    const random = mulberry32(seed);
    project = await durableProject({ rounds: ROUNDS });
    let round = 0;
    let inFlight = 0;
    const points: string[] = [];
    for (let kill = 0; kill < 3; kill += 1) {
      round += 2 + Math.floor(random() * 7);
      const kind = ["model", "tool", "after"][Math.floor(random() * 3)]!;
      const tool = round % 3 === 0 ? "note" : "look";
      const how = kind === "tool" && tool === "note" ? "after" : kind;
      points.push(`${how} ${round}`);
      if (how === "model") project.holdModel(round);
      else if (how === "tool") project.blockTool(tool, round);
      else project.killAfter(tool, round);
      const attempt = project.start(kill === 0 ? ["run", project.tactic(), "--input", "go"] : ["run", "--resume"]);
      if (how === "after") expect(await attempt.exit(120_000), `${points.join(", ")}: ${attempt.stderr()}`).toBe("SIGKILL");
      else {
        expect(await waitUntil(() => project.holding() || project.toolCalls().includes(`${tool} ${round}`), 120_000), `${points.join(", ")}: ${attempt.stderr()}`).toBe(true);
        if (how === "tool") expect(await waitForFile(path.join(project.dir, "blocked"))).toBe(true);
        process.kill(attempt.pid, "SIGKILL");
        await attempt.exit();
      }
      if (how === "model") inFlight += 1;
      project.clearMarks();
    }
    // A kill right after a call may land while the next request is on its way: at most one more each.
    const afterKills = points.filter((point) => point.startsWith("after")).length;
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, `${points.join(", ")}: ${resumed.stderr}`).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(reference.output);
    expect(json.cost).toBeCloseTo(reference.cost, 10);
    expect(json.usage.llm_calls).toBe(reference.llmCalls);
    expect(json.resumed?.attempt).toBe(4);
    expectToolCounts(project.toolCalls());
    expect(project.modelRequests()).toBeGreaterThanOrEqual(ROUNDS + 1 + inFlight);
    expect(project.modelRequests()).toBeLessThanOrEqual(ROUNDS + 1 + inFlight + afterKills);
  });
});

/** A small seeded generator, so that a failing case can be run again as it was. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
