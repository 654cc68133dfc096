import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BIN, emptyHome, EXAMPLE } from "../helpers/runCli.js";
import { waitUntil } from "../helpers/waitUntil.js";

// `lllm mcp serve` through the real CLI, driven with raw JSON-RPC lines on its stdin: what a client that sends a
// bad line, a huge one, or thousands at once gets back, and that the server keeps serving.

// Each case starts the CLI as a server: 10-13 s on a loaded machine, against the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

const WEATHER = path.join(EXAMPLE, "weather");
let server: ChildProcessWithoutNullStreams | undefined;

afterEach(() => {
  server?.kill("SIGKILL");
  server = undefined;
});

interface Served {
  send(line: string): void;
  /** The next answer with this id (`null` for errors to lines that had none). */
  answer(id: number | null): Promise<{ id: unknown; result?: unknown; error?: { code: number; message: string } }>;
  answers(): Array<{ id: unknown }>;
  stderr(): string;
  exited: Promise<number | null>;
  /** Stop reading stdout, so that the server's writes back up. */
  pauseOutput(): void;
  resumeOutput(): void;
}

function serve(): Served {
  server = spawn(process.execPath, [BIN, "mcp", "serve", WEATHER], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
  const child = server;
  let pending = "";
  const received: Array<{ id: unknown; result?: unknown; error?: { code: number; message: string } }> = [];
  const waiters: Array<() => void> = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on("error", () => {}); // a server that died early: the failing expectation says so
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines.filter(Boolean)) received.push(JSON.parse(line) as (typeof received)[number]);
    for (const wake of waiters.splice(0)) wake();
  });
  let ended = false;
  // "close": the exit code once all the server wrote is read (on a busy machine its last lines can come after "exit").
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code, signal) => {
      ended = true;
      resolve(code ?? (signal === null ? null : -1));
    }),
  );
  return {
    send: (line) => void child.stdin.write(`${line}\n`),
    answer: async (id) => {
      for (;;) {
        const index = received.findIndex((message) => message.id === id);
        if (index >= 0) return received.splice(index, 1)[0]!;
        if (ended) throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) without answering id ${id}; stderr: ${stderr}`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), exited]);
      }
    },
    answers: () => received,
    stderr: () => stderr,
    exited,
    pauseOutput: () => child.stdout.pause(),
    resumeOutput: () => child.stdout.resume(),
  };
}

const request = (id: number, method: string, params: Record<string, unknown> = {}): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });

async function initialize(served: Served): Promise<void> {
  served.send(request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }));
  expect((await served.answer(1)).result).toBeDefined();
  served.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
}

describe("lllm mcp serve under bad input", () => {
  it("answers a line that is not JSON with a parse error (-32700), and keeps serving", async () => {
    const served = serve();
    await initialize(served);
    served.send("this is not json {");
    expect((await served.answer(null)).error).toMatchObject({ code: -32700 });
    served.send(JSON.stringify({ jsonrpc: "2.0", id: 5, nonsense: true }));
    expect((await served.answer(5)).error).toMatchObject({ code: -32600 });
    served.send(request(2, "tools/list"));
    expect((await served.answer(2)).result).toMatchObject({ tools: expect.any(Array) });
  });

  it("answers a message over 10 MB with an error for its id, says why on stderr, and keeps serving", async () => {
    const served = serve();
    await initialize(served);
    served.send(request(7, "tools/call", { name: "divide", arguments: { a: 1, b: 2, padding: "x".repeat(11 * 1024 * 1024) } }));
    const refused = await served.answer(7);
    expect(refused.error?.code).toBe(-32600);
    expect(refused.error?.message).toContain("over the limit");
    // Said on stderr, another pipe than the answer's: wait for it.
    expect(await waitUntil(() => served.stderr().includes("over the limit of 10485760 bytes")), served.stderr()).toBe(true);
    served.send(request(8, "tools/call", { name: "divide", arguments: { a: 1, b: 4 } }));
    expect((await served.answer(8)).result).toBeDefined();
    server!.stdin.end();
    expect(await served.exited).toBe(0);
  });

  it("answers 2,000 requests sent at once without a MaxListenersExceededWarning", async () => {
    const served = serve();
    await initialize(served);
    served.pauseOutput(); // the server's writes back up, as with a slow client
    server!.stdin.write(Array.from({ length: 2000 }, (_, index) => request(100 + index, "tools/list")).join("\n") + "\n");
    // Wait until the server has answered into a full pipe, then read everything.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    served.resumeOutput();
    for (let index = 0; index < 2000; index += 1) await served.answer(100 + index);
    // Read once the server has ended: a warning still on its way through the pipe would pass unseen.
    server!.stdin.end();
    expect(await served.exited).toBe(0);
    expect(served.stderr()).not.toContain("MaxListenersExceededWarning");
  });

  it("stops serving on SIGTERM with exit code 143, while the client still holds its stdin", async () => {
    const served = serve();
    await initialize(served);
    server!.kill("SIGTERM");
    expect(await served.exited).toBe(143);
    expect(served.stderr()).toContain("SIGTERM");
  });
});
