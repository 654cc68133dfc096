import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, itemAnswer, messageText, waitForFile, type DurableProject } from "../helpers/durableProject.js";
import { waitUntil } from "../helpers/processTree.js";

vi.setConfig({ testTimeout: 240_000 });

// A batch killed while its items are mid-loop, run again with the same command (the same --out): each item whose run
// stopped resumes it, so that no round is repeated: the model is asked each round of each item once (plus the
// requests in flight at the kill), the tools that are not idempotent run once, and every item ends with the answer
// an uninterrupted batch gives.

const ITEMS = 4;
const ROUNDS = 8;

let project: DurableProject | undefined;
afterEach(async () => {
  await project?.close();
  project = undefined;
});

interface Line {
  id: string;
  status: string;
  output: string;
  cost: number;
}

function lines(file: string): Line[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Line);
}

function counts(calls: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const call of calls) map.set(call, (map.get(call) ?? 0) + 1);
  return map;
}

describe("lllm batch run again after a kill", () => {
  it("resumes the items that stopped mid-loop: no round repeated, every item's answer and cost as if uninterrupted", async () => {
    project = await durableProject({ answer: itemAnswer(ROUNDS) });
    const inputs = path.join(project.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: ITEMS }, (_, item) => `item ${item}`).join("\n"));
    const out = path.join(project.dir, "out.jsonl");
    const command = ["batch", project.tactic(), "--inputs", inputs, "--lines", "--out", out, "--concurrency", String(ITEMS), "--quiet"];

    // Uninterrupted, into another file: the reference answers and costs.
    const reference = path.join(project.dir, "reference.jsonl");
    const whole = await project.run(["batch", project.tactic(), "--inputs", inputs, "--lines", "--out", reference, "--concurrency", String(ITEMS), "--quiet"]);
    expect(whole.code, whole.stderr).toBe(0);
    const expected = new Map(lines(reference).map((line) => [line.id, line]));
    expect(expected.size).toBe(ITEMS);
    const requestsWhole = project.modelRequests();
    expect(requestsWhole).toBe(ITEMS * (ROUNDS + 1));
    const callsWhole = project.toolCalls().length;
    writeFileSync(path.join(project.dir, "calls.log"), "");

    // Item 2 blocks in its `look` of round 4; the other items' requests of round 5 are held (none is in a call of
    // `note`, which may not run again): the batch is killed then.
    project.blockTool("look", 204);
    project.holdEvery((messages) => messageText(messages.find((message) => message.role === "user")) !== "item 2" && messages.filter((message) => message.role === "tool").length === 5);
    const first = project.start(command);
    expect(await waitUntil(() => project!.heldCount() === ITEMS - 1, 120_000), first.stderr()).toBe(true);
    expect(await waitForFile(path.join(project.dir, "blocked")), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    const requestsFirst = project.modelRequests() - requestsWhole;
    project.clearMarks();
    project.holdEvery(undefined);

    const again = await project.run(command);
    expect(again.code, `${again.stderr}\n${existsSync(out) ? readFileSync(out, "utf8") : ""}`).toBe(0);
    expect(again.stderr).toMatch(/item(s)? stopped mid-way in an earlier run: they resume from where they stopped/);
    const done = lines(out);
    expect(done.map((line) => line.id).sort()).toEqual(["1", "2", "3", "4"]);
    for (const line of done) {
      expect(line.status).toBe("ok");
      expect(line.output).toBe(expected.get(line.id)!.output);
      expect(line.cost).toBeCloseTo(expected.get(line.id)!.cost, 10);
    }
    // Each note once; each look at most twice (item 2's round 4 was cut short).
    const calls = counts(project.toolCalls());
    expect([...calls.keys()].length).toBe(callsWhole);
    for (const [call, times] of calls) expect(times, call).toBeLessThanOrEqual(call.startsWith("note") ? 1 : 2);
    expect(calls.get("look 204")).toBe(2);
    // Each round once, plus the requests on their way at the kill (at most one an item).
    const requestsAfter = project.modelRequests() - requestsWhole;
    expect(requestsAfter).toBeGreaterThanOrEqual(ITEMS * (ROUNDS + 1));
    expect(requestsAfter).toBeLessThanOrEqual(ITEMS * (ROUNDS + 1) + ITEMS);
    expect(requestsAfter - requestsFirst).toBeLessThan(ITEMS * (ROUNDS + 1));
  });

  it("an item stopped during a call that may not run again fails, naming it, and resumes with --retry-failed --rerun-unknown", async () => {
    project = await durableProject({ answer: itemAnswer(ROUNDS) });
    const inputs = path.join(project.dir, "items.txt");
    writeFileSync(inputs, "item 0\nitem 1\n");
    const out = path.join(project.dir, "out.jsonl");
    const command = ["batch", project.tactic(), "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--quiet"];
    project.blockTool("note", 103);
    const first = project.start(command);
    expect(await waitForFile(path.join(project.dir, "blocked")), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    project.clearMarks();
    const refused = await project.run(command);
    expect(refused.code, refused.stderr).toBe(1);
    const failed = lines(out).find((line) => line.id === "2") as Line & { error: { code: string; message: string } };
    expect(failed.status).toBe("error");
    expect(failed.error.code).toBe("resume_unknown_call");
    expect(failed.error.message).toContain("the run stopped during a call of `note` (agent `worker`, arguments {\"n\":103})");
    expect(counts(project.toolCalls()).get("note 103")).toBe(1);
    const again = await project.run([...command, "--retry-failed", "--rerun-unknown"]);
    expect(again.code, again.stderr).toBe(0);
    expect(lines(out).map((line) => [line.id, line.status]).sort()).toEqual([["1", "ok"], ["2", "ok"]]);
    const calls = counts(project.toolCalls());
    expect(calls.get("note 103")).toBe(2);
    for (const [call, times] of calls) if (call !== "note 103" && call.startsWith("note")) expect(times, call).toBe(1);
  });
});
