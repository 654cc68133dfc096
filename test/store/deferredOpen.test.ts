import { existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PriceTable } from "../../src/store/PriceTable.js";
import { RunRecorder } from "../../src/store/RunRecorder.js";
import { RunStore } from "../../src/store/RunStore.js";
import { RunTally } from "../../src/store/RunTally.js";
import { redactorOf } from "../../src/util/redact.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  removeTempDirs();
});

function recorderOptions(file: string, warnings: string[] = []) {
  return {
    file,
    tally: new RunTally(PriceTable.load()),
    redactor: redactorOf([]),
    warn: (message: string) => warnings.push(message),
    run: { tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input: "hi", vars: {}, models: ["m"], lllmVersion: "0" },
  };
}

/** A local HTTP server that answers after `release()`: a model request still in flight. */
async function slowServer(): Promise<{ url: string; arrived: Promise<void>; release: () => void }> {
  let release!: () => void;
  let arrive!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const server = createServer((_request, response) => {
    arrive();
    void released.then(() => response.end("{}"));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, arrived, release };
}

function storedRun(file: string, id: string) {
  const store = RunStore.openSync(file);
  try {
    return store.getRun(id);
  } finally {
    store.close();
  }
}

describe("the run store opens off the run's critical path", () => {
  it("not before the first request is sent: the run is recorded while the model works", async () => {
    const file = path.join(tempDir(), "logs.db");
    const recorder = RunRecorder.begin(recorderOptions(file));
    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: [], model: "m", sent: [{ role: "user", content: "hi" }] });
    // Nothing is opened (libsql not loaded, no file) before a request is on the wire.
    await new Promise((resolve) => setImmediate(resolve));
    expect(existsSync(file)).toBe(false);

    const server = await slowServer();
    const answer = fetch(server.url);
    await server.arrived;
    // The request waits for its answer; meanwhile the store opens and the run reads as running.
    await expect.poll(() => existsSync(file) && storedRun(file, recorder.id)?.status, { timeout: 20_000 }).toBe("running");
    server.release();
    await (await answer).text();

    recorder.finish({ output: "done" });
    expect(storedRun(file, recorder.id)?.status).toBe("ok");
  });

  it("at the first event after a model call when no request goes on the wire (a scripted model)", () => {
    const file = path.join(tempDir(), "logs.db");
    const recorder = RunRecorder.begin(recorderOptions(file));
    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: [], model: "m", sent: [{ role: "user", content: "hi" }] });
    expect(existsSync(file)).toBe(false);
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "hello", toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } });
    expect(storedRun(file, recorder.id)?.status).toBe("running");
    recorder.finish({ output: "hello" });
    const run = storedRun(file, recorder.id);
    expect(run?.status).toBe("ok");
    expect(run?.model_calls).toHaveLength(1);
  });

  it("a store that cannot be opened is told once, and the recorder says so", () => {
    const blocker = path.join(tempDir(), "not-a-folder");
    const warnings: string[] = [];
    const recorder = RunRecorder.begin(recorderOptions(path.join(blocker, "logs.db"), warnings));
    // A file where the store's folder should be.
    writeFileSync(blocker, "x");
    recorder.finish({ output: "x" });
    expect(recorder.failed).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("cannot be written");
  });
});
