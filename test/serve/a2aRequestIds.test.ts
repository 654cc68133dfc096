import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { shopPackage, startServeCli } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 180_000 });

// An A2A 0.3 request whose ids are not strings: the SDK's 0.3 layer passes them on as they are.
let mock: MockOpenAIServer;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: () => "fine" });
});

afterAll(async () => {
  await mock?.close();
});

describe("lllm serve over A2A: ids that are not strings", () => {
  it("are invalid params (-32602), and the runs that follow are still recorded", async () => {
    const home = tempDir("lllm-home-");
    const serving = await startServeCli([shopPackage(mock.url)], { env: { LLLM_HOME: home } });
    const rpc = async (method: string, params: Record<string, unknown>): Promise<{ result?: { status: { state: string } }; error?: { code: number; message: string } }> => {
      const response = await fetch(`${serving.url}/a2a`, { method: "POST", headers: { authorization: `Bearer ${serving.token!}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
      return (await response.json()) as never;
    };
    const message = (extra: Record<string, unknown>): Record<string, unknown> => ({ message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }], ...extra } });
    try {
      expect((await rpc("message/send", message({ contextId: [{ type: "text" }] }))).error).toEqual({ code: -32602, message: "params.message.contextId must be a string" });
      // A boolean kept in the store aborted the process that merged it (the server, at its next tasks/get; lllm logs).
      expect((await rpc("message/send", message({ contextId: true }))).error).toEqual({ code: -32602, message: "params.message.contextId must be a string" });
      expect((await rpc("tasks/get", { id: "no-such-task" })).error).toMatchObject({ code: -32001 });
      expect((await rpc("message/send", message({ taskId: { a: 1 } }))).error).toEqual({ code: -32602, message: "params.message.taskId must be a string" });
      expect((await rpc("tasks/get", { id: { a: 1 } })).error).toMatchObject({ code: -32602 });
      expect((await rpc("tasks/cancel", { id: ["x"] })).error).toMatchObject({ code: -32602 });
      expect((await rpc("message/send", message({ contextId: "ctx-1" }))).result!.status.state).toBe("completed");
    } finally {
      process.kill(serving.cli.pid, "SIGTERM");
      expect(await serving.cli.exit(60_000)).toBe(0);
    }
    const listed = await runCli(["logs", "--served", "--json"], { env: { LLLM_HOME: home } });
    expect(listed.stderr).toBe("");
    expect((JSON.parse(listed.stdout) as { runs: unknown[] }).runs).toHaveLength(1);
  });
});
