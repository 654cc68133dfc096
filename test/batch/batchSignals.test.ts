import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { batch, lastUserText, readResults, removeTempDirs, spawnBatch, tempDir, until } from "./batchTestHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

describe("lllm batch and SIGTERM", () => {
  it("starts no new item after SIGTERM (exit 143): only the running ones are cancelled, and the same command runs every item once", async () => {
    // The model holds its answers until released: the items running at the signal are still running.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const server = await startMockOpenAIServer({
      handler: async (body) => {
        asked += 1;
        await released;
        return { text: `echo: ${lastUserText(body)}`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
      },
    });
    servers.push(server);
    const dir = tempDir();
    const tactic = path.join(dir, "echo.yaml");
    writeFileSync(tactic, `name: echo\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
    const inputs = path.join(dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 30 }, (_, index) => `q${index + 1}`).join("\n"));
    const out = path.join(dir, "out.jsonl");
    const env = { LLLM_HOME: path.join(dir, "home"), MOCK_KEY: "sk-mock-batch" };
    const args = [tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "2"];

    const first = spawnBatch(args, env);
    await until(() => asked === 2);
    first.child.kill("SIGTERM");
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(143);
    // Before, every item left in the dataset was started after the signal, cancelled at once and recorded as a run
    // stopped mid-way ("28 cancelled" more, and as many runs for the rerun to resume).
    expect(stopped.stderr).toContain("0 ok, 0 failed, 2 cancelled");
    expect(readResults(out)).toEqual([]);

    release();
    const again = await batch(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("2 items stopped mid-way in an earlier run");
    expect(again.stderr).toContain("30 ok, 0 failed");
    expect(readResults(out).map((line) => line.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 30 }, (_, index) => String(index + 1)));
  }, 180_000);
});
