import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { shopPackage, startServeCli } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 180_000 });

// What an A2A client sends must not reach the server's stderr as lines of their own: the SDK under the A2A route
// prints some of it raw (ids it cannot find, the id of a message whose task failed, with the error's stack).
let mock: MockOpenAIServer;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: () => "fine" });
});

afterAll(async () => {
  await mock?.close();
});

describe("lllm serve over A2A: the server's stderr", () => {
  it("carries no line a client wrote (a reference task id, a message id) and no stack; a file part of no type is rejected", async () => {
    const serving = await startServeCli([shopPackage(mock.url)]);
    try {
      const rpc = async (message: Record<string, unknown>): Promise<{ result: { status: { state: string; message: { parts: Array<{ text: string }> } } } }> => {
        const response = await fetch(`${serving.url}/a2a`, { method: "POST", headers: { authorization: `Bearer ${serving.token!}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", ...message } } }) });
        return (await response.json()) as never;
      };
      const referring = await rpc({ messageId: "m1", referenceTaskIds: ["gone\nlllm: forged by a reference task id"], parts: [{ kind: "text", text: "hi" }] });
      expect(referring.result.status.state).toBe("completed");
      // A 0.3 client's file part whose mimeType is not a string.
      const typeless = await rpc({ messageId: "m2\nlllm: forged by a message id", parts: [{ kind: "file", file: { bytes: "iVBORw0KGgo=", mimeType: 5 } }] });
      expect(typeless.result.status.state).toBe("rejected");
      expect(typeless.result.status.message.parts[0]!.text).toContain("file part of type 5");
    } finally {
      // Its stderr is whole once it has exited.
      process.kill(serving.cli.pid, "SIGTERM");
      expect(await serving.cli.exit(60_000)).toBe(0);
    }
    const stderr = serving.cli.stderr();
    expect(stderr).not.toMatch(/^lllm: forged/m);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr).toMatch(/^lllm: received SIGTERM/m);
  });

  it("a request that fails inside lllm (its run store damaged) tells the client a request id, not the server's files, over A2A and OpenAI's routes; the log has why", async () => {
    const home = tempDir("lllm-home-");
    writeFileSync(path.join(home, "logs.db"), "this is no SQLite database, but a damaged run store");
    const serving = await startServeCli([shopPackage(mock.url)], { env: { LLLM_HOME: home } });
    try {
      const response = await fetch(`${serving.url}/a2a`, { method: "POST", headers: { authorization: `Bearer ${serving.token!}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tasks/get", params: { id: "some-task" } }) });
      const body = (await response.json()) as { id: number; error: { code: number; message: string } };
      expect(body.error.code).toBe(-32603);
      expect(body.error.message).toMatch(/^internal error; the server's log has the details \(request req_[0-9a-f]+\)$/);
      expect(body.error.message).not.toContain(home);
      const id = /request (req_[0-9a-f]+)/.exec(body.error.message)![1]!;
      // The log line and the answer go by different pipes: either may come first.
      await expect.poll(() => serving.cli.stderr()).toContain(`A2A request ${id} failed: the run log ${path.join(home, "logs.db")} is damaged`);
      // The same over OpenAI's routes (a kept response is read from the run store).
      const kept = await fetch(`${serving.url}/v1/responses/resp_0123`, { headers: { authorization: `Bearer ${serving.token!}` } });
      expect(kept.status).toBe(500);
      const keptError = ((await kept.json()) as { error: { message: string } }).error.message;
      expect(keptError).toMatch(/^internal error; the server's log has the details \(request req_[0-9a-f]+\)$/);
      await expect.poll(() => serving.cli.stderr()).toContain(`lllm: request ${/request (req_[0-9a-f]+)/.exec(keptError)![1]!} failed: the run log ${path.join(home, "logs.db")} is damaged`);
    } finally {
      serving.cli.killTree();
    }
  });
});
