import { describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/errors.js";
import { RemoteRun, type RunTransport } from "../../src/serve/queue/RemoteRun.js";
import type { ServedModel } from "../../src/serve/ServedModels.js";
import type { ServedJob } from "../../src/serve/queue/serveQueueWire.js";

// The server's side of a run on a worker, without Redis: what it does with the events a worker sends.
function remoteRun(): { run: RemoteRun; enqueued: ServedJob[] } {
  const enqueued: ServedJob[] = [];
  let keys = 0;
  const transport: RunTransport = {
    serverId: "server-1",
    newRunKey: () => `run-${++keys}`,
    enqueue: (_run, job) => void enqueued.push(job),
    withdraw: () => Promise.resolve(false),
    command: () => undefined,
    track: () => undefined,
    release: () => undefined,
  };
  const job = { model: "pool", input: "hi", served: { route: "/v1/chat/completions", model: "pool", client: {}, response_id: "" }, approveAll: false, askApproval: false, stream: true, log: false, pendingTtlMs: 1000 };
  const run = new RemoteRun({ model: { id: "pool" } as ServedModel, job, transport });
  run.start();
  return { run, enqueued };
}

const state = (streamed: string) => ({ lastText: streamed, streamedSinceCall: streamed, usage: { promptTokens: 1, completionTokens: 1 } });

describe("a run its worker gave back (the worker's drain ended, or a second signal)", () => {
  it("runs again at once, on the queue under a new key, when its client saw nothing of it", async () => {
    const { run, enqueued } = remoteRun();
    run.onEvent({ run: "run-1", type: "started", worker: "w1", seq: 1 });
    run.onEvent({ run: "run-1", type: "given_back", worker: "w1", state: state(""), seq: 2 });
    expect(enqueued.map((job) => job.runKey)).toEqual(["run-1", "run-2"]);
    expect(run.finished).toBeUndefined();
    // The new attempt numbers its events from 1 again, and ends as any run does.
    run.onEvent({ run: "run-2", type: "started", worker: "w2", seq: 1 });
    expect(run.worker).toBe("w2");
  });

  it("ends with serve_worker_lost, saying how much its client had, when part of the answer was sent", async () => {
    const { run, enqueued } = remoteRun();
    run.onEvent({ run: "run-1", type: "started", worker: "w1", seq: 1 });
    run.onEvent({ run: "run-1", type: "text", delta: "Part one. " });
    run.onEvent({ run: "run-1", type: "given_back", worker: "w1", state: state("Part one. "), seq: 2 });
    const ended = await run.done;
    expect(enqueued).toHaveLength(1);
    expect(ended.ok).toBe(false);
    expect(!ended.ok && ended.error).toMatchObject({ code: "serve_worker_lost", message: expect.stringContaining("stopped before the answer was complete (10 characters of it had been sent)") });
  });

  it("ends for its client's cancel when that crossed the worker's stop", async () => {
    const { run, enqueued } = remoteRun();
    run.onEvent({ run: "run-1", type: "started", worker: "w1", seq: 1 });
    const cancelled = new InterruptedError("interrupted", "the client cancelled the request");
    run.abort(cancelled);
    run.onEvent({ run: "run-1", type: "given_back", worker: "w1", state: state(""), seq: 2 });
    const ended = await run.done;
    expect(enqueued).toHaveLength(1);
    expect(!ended.ok && ended.error).toBe(cancelled);
  });
});
