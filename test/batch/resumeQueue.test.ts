import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { durableProject, itemAnswer, waitForFile, type DurableProject } from "../helpers/durableProject.js";
import { until } from "./batchTestHelpers.js";
import { describeRedis, QUICK, SHORT_LOCK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

// `lllm batch --queue`: a worker killed while an item is mid-loop; another worker of the same machine (the same run
// store) takes the item back and resumes its run: no round repeated, no tool that is not idempotent run twice.

const ROUNDS = 8;

let project: DurableProject | undefined;

describeRedis("lllm batch --queue, a worker killed mid-item", () => {
  it("another worker takes the item back and resumes its run from where it stopped", async () => {
    project = await durableProject({ answer: itemAnswer(ROUNDS) });
    try {
      const redis = await startRedis();
      const env = { ...project.env, ...QUICK, ...SHORT_LOCK };
      const inputs = path.join(project.dir, "items.txt");
      writeFileSync(inputs, "item 0\nitem 1\n");
      const out = path.join(project.dir, "out.jsonl");
      // The workers take a tactic of a package they have (its settings choose where the keys go).
      const pkg = path.join(project.dir, "pkg");
      mkdirSync(path.join(pkg, "tactics"), { recursive: true });
      writeFileSync(path.join(pkg, "tactics", "queued.yaml"), readFileSync(project.tactic(), "utf8").replace("name: rounds", "name: queued").replace("packages: [./pkg]\n", ""));
      const producer = startBatch(["durable.tactics:queued", "-p", pkg, "--inputs", inputs, "--lines", "--out", out, "--queue", redis.url, "--no-log"], env, { cwd: project.dir });
      // Item 1 (its second line) blocks in its `look` of round 5, in the first worker.
      project.blockTool("look", 105);
      // One item at a time: item 0 is done when item 1 blocks.
      const doomed = startWorker(redis.url, env, { packages: [pkg], cwd: project.dir, log: true, concurrency: 1 });
      expect(await waitForFile(path.join(project.dir, "blocked"), 30_000), `${doomed.stderr()}\n${producer.stderr()}`).toBe(true);
      doomed.child.kill("SIGKILL");
      await doomed.exited;
      const requestsBefore = project.modelRequests();
      project.clearMarks();
      const survivor = startWorker(redis.url, env, { packages: [pkg], cwd: project.dir, log: true, concurrency: 2 });
      expect(await producer.exited, producer.stderr()).toBe(0);
      const lines = readFileSync(out, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { id: string; status: string; output: string });
      expect(lines.map((line) => [line.id, line.status, line.output]).sort()).toEqual([["1", "ok", "item 0: 8 rounds"], ["2", "ok", "item 1: 8 rounds"]]);
      // Each note once; only the `look` cut short ran twice.
      const calls = project.toolCalls();
      const counted = new Map<string, number>();
      for (const call of calls) counted.set(call, (counted.get(call) ?? 0) + 1);
      expect([...counted.entries()].filter(([, times]) => times > 1)).toEqual([["look 105", 2]]);
      expect(counted.size).toBe(2 * ROUNDS);
      // Item 1's first five rounds were replayed: the survivor asked the model only its last rounds.
      expect(project.modelRequests() - requestsBefore).toBe(ROUNDS + 1 - 6);
      survivor.child.kill("SIGINT");
      await until(() => survivor.child.exitCode !== null || survivor.child.signalCode !== null, 60_000);
    } finally {
      await project.close();
    }
  }, 240_000);
});
