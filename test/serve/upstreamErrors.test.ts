import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { startServeCli, type ServingCli } from "../helpers/serve.js";
import { tempTree } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 180_000 });

// A served tactic whose model provider fails: the client of `lllm serve` learns that the upstream failed and the
// request's id, not the operator's set-up (the provider's URL, the variable holding its key); the server's log has
// the details under the same id.
let mock: MockOpenAIServer;
let serving: ServingCli | undefined;

beforeAll(async () => {
  // It wants a key the operator's variable does not hold: every call is a 401.
  mock = await startMockOpenAIServer({ apiKey: "the-right-upstream-key", script: [] });
});

afterEach(() => {
  serving?.cli.killTree();
  serving = undefined;
});

afterAll(async () => {
  await mock?.close();
});

function tactics(): string {
  const agent = (baseUrl: string) => `agent_configs:\n  - name: clerk\n    system_prompt: You help.\n    model_name: gpt-test\n    invoker_config: {base_url: "${baseUrl}", api_key_env: OPERATOR_UPSTREAM_KEY}\n`;
  return tempTree({
    "refused.yaml": `name: refused\nprompt: "{input}"\n${agent(mock.url)}`,
    // Nothing listens on port 9 (discard): the provider cannot be reached.
    "away.yaml": `name: away\nprompt: "{input}"\n${agent("http://127.0.0.1:9/v1")}`,
  });
}

const chat = (model: string) =>
  fetch(`${serving!.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${serving!.token}` }, body: JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }] }) });

describe("lllm serve: a model provider that fails", () => {
  it("answers 502 with a generic message and the request id (chat completions and A2A); the details are on the server's stderr under that id", async () => {
    const dir = tactics();
    serving = await startServeCli([`${dir}/refused.yaml`, `${dir}/away.yaml`], { env: { OPERATOR_UPSTREAM_KEY: "a-wrong-key-4417" } });
    for (const model of ["refused", "away"]) {
      const response = await chat(model);
      expect(response.status).toBe(502);
      const body = (await response.json()) as { error: { message: string; type: string; code: string } };
      expect(body.error.type).toBe("upstream_error");
      expect(body.error.message).toMatch(/^the model provider of this tactic failed \(provider_\w+\); the server's log has the details \(request chatcmpl-[0-9a-f]+\)$/);
      expect(body.error.message).not.toContain("127.0.0.1");
      expect(body.error.message).not.toContain("OPERATOR_UPSTREAM_KEY");
      const id = /request (chatcmpl-[0-9a-f]+)/.exec(body.error.message)![1]!;
      // The operator reads what failed, under the id the client quotes. The log line and the answer go by different
      // pipes: either may come first.
      const loggedLine = () => serving!.cli.stderr().split("\n").find((line) => line.includes(`request ${id} failed`));
      await expect.poll(loggedLine).toBeDefined();
      const logged = loggedLine();
      expect(logged).toContain(model === "away" ? "127.0.0.1:9" : String(mock.port));
    }
    // The same over A2A: the failed task's status message.
    const rpc = await fetch(`${serving.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${serving.token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "Hi" }], metadata: { skill: "away" } } } }),
    });
    const task = ((await rpc.json()) as { result: { id: string; status: { state: string; message: { parts: Array<{ text: string }> } } } }).result;
    expect(task.status.state).toBe("failed");
    const said = task.status.message.parts.map((part) => part.text).join("");
    expect(said).toBe(`the model provider of this tactic failed (provider_connection); the server's log has the details (request ${task.id})`);
    await expect.poll(() => serving!.cli.stderr()).toContain(`request ${task.id} failed (provider_connection): cannot reach http://127.0.0.1:9/v1`);
    expect(serving.cli.stderr()).not.toContain("a-wrong-key-4417");
  });

  it("answers 400 with the provider's own words when it refuses the request itself (too long, say), still without its address", async () => {
    const strict = await startMockOpenAIServer({ script: [] });
    try {
      strict.injectFailure({ status: 400, message: "This model's maximum context length is 8192 tokens; your messages resulted in 9120 tokens." });
      const dir = tempTree({ "strict.yaml": `name: strict\nprompt: "{input}"\nagent_configs:\n  - name: clerk\n    system_prompt: You help.\n    model_name: gpt-test\n    invoker_config: {base_url: "${strict.url}", api_key_env: OPERATOR_UPSTREAM_KEY}\n` });
      serving = await startServeCli([`${dir}/strict.yaml`], { env: { OPERATOR_UPSTREAM_KEY: "a-key-5521" } });
      const response = await chat("strict");
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string; type: string; code: string } };
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: "provider_http" });
      expect(body.error.message).toContain("the model provider refused the request (HTTP 400): This model's maximum context length is 8192 tokens");
      expect(body.error.message).not.toContain(String(strict.port));
      expect(body.error.message).not.toContain("OPERATOR_UPSTREAM_KEY");
    } finally {
      await strict.close();
    }
  });
});
