import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "./batchTestHelpers.js";
import { describeRedis, eventually, itemsFile, QUICK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

let servers: MockOpenAIServer[] = [];

/**
 * A package `clerk` whose tactic's agent is offered `erase` (declared `approval: required`), and a model that calls
 * it once per item and then answers: the worker decides the call without asking anybody.
 */
async function clerkSetup(): Promise<{ kit: string; tactic: string; outbox: string; env: NodeJS.ProcessEnv; erased: () => string }> {
  const server = await startMockOpenAIServer({
    handler: (body) => {
      const last = body.messages?.at(-1) as { role?: string } | undefined;
      return last?.role === "tool" ? "Done." : { tool_calls: [{ name: "erase", arguments: { key: "record" } }] };
    },
  });
  servers.push(server);
  const dir = tempDir();
  const kit = path.join(dir, "clerk");
  mkdirSync(path.join(kit, "tactics"), { recursive: true });
  cpSync(path.join(ROOT, "test/fixtures/limits/runtree/tools"), path.join(kit, "tools"), { recursive: true });
  writeFileSync(path.join(kit, "lllm.toml"), '[package]\nname = "clerk"\nversion = "1.0.0"\n');
  const tactic = path.join(kit, "tactics", "clerk.yaml");
  writeFileSync(tactic, `name: clerk\npackages: [..]\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}\n  tools: [erase]\nagent_configs:\n  - name: clerk\n    system_prompt: You are the clerk.\n`);
  const outbox = path.join(dir, "outbox.txt");
  const env = { LLLM_HOME: path.join(dir, "home"), MOCK_KEY: "sk-mock-batch", LLLM_TEST_OUTBOX: outbox, ...QUICK };
  return { kit, tactic, outbox, env, erased: () => (existsSync(outbox) ? readFileSync(outbox, "utf8") : "") };
}

describeRedis("approval in lllm worker", () => {
  it("a worker asks nobody: a call that needs approval is refused by default, said once; --approve all on the batch runs it", async () => {
    try {
      const redis = await startRedis();
      const setup = await clerkSetup();
      const worker = startWorker(redis.url, setup.env, { packages: [setup.kit] });
      const refused = startBatch([setup.tactic, "--inputs", itemsFile(path.dirname(setup.kit), 3), "--lines", "--queue", redis.url, "--no-log", "--quiet"], setup.env);
      expect(await refused.exited).toBe(0);
      expect(setup.erased()).toBe("");
      // The worker's line comes through its own pipe, which the batch's exit does not wait for.
      await eventually(() => worker.stderr().includes("needs approval and was refused"), { state: () => worker.stderr() });

      const approved = startBatch([setup.tactic, "--inputs", itemsFile(path.dirname(setup.kit), 2), "--lines", "--queue", redis.url, "--no-log", "--quiet", "--approve", "all"], setup.env);
      expect(await approved.exited).toBe(0);
      expect(setup.erased()).toBe("erased record\nerased record\n");
      worker.child.kill("SIGINT");
      expect(await worker.exited).toBe(130);
      // Said once, for the three refused items and none of the approved ones: counted once all the worker wrote is in.
      expect(worker.stderr().match(/`erase` needs approval and was refused: workers ask nobody; start the batch with --approve all/g)).toHaveLength(1);
      expect(worker.stderr().match(/needs approval and was refused/g)).toHaveLength(1);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
      servers = [];
    }
  }, 240_000);
});
