import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter, type OversizedLine } from "../LineSplitter.js";
import { writeOwnStdout } from "../../util/ownStdout.js";
import { sdkServer } from "./sdkServer.js";
import { MAX_CLIENT_MESSAGE_BYTES } from "./messageLimit.js";

// The SDK's CommonJS build, as the rest of the server side (serverFor) requires it: an ES import here loaded its
// ES module build too, with a second copy of zod, at every start of `lllm mcp serve`.
const { ErrorCode, JSONRPCMessageSchema } = sdkServer();

/**
 * The server side of MCP over stdio, in place of the SDK's `StdioServerTransport`, which closes the connection
 * (and so ends `lllm mcp serve` with status 0, silently) on a message over its 10 MB buffer, and gives no answer
 * to a line that is not JSON. Here a bad line gets the JSON-RPC error it calls for (-32700 parse error, -32600
 * invalid request, with the request's id when it can be found) and the server keeps serving. Writes wait for
 * `drain` together, one listener for all, so that thousands of answers at once do not pile up listeners.
 */
export class StdioServerLines implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #log: (text: string) => void;
  readonly #lines: LineSplitter;
  /** Settles at the next `drain` while stdout's buffer is full. */
  #drained: Promise<void> | undefined;
  readonly #onData = (chunk: Buffer): void => this.#lines.push(chunk);
  readonly #onError = (error: Error): void => this.onerror?.(error);

  constructor(options: { stdin: Readable; stdout: Writable; log: (text: string) => void }) {
    this.#stdin = options.stdin;
    this.#stdout = options.stdout;
    this.#log = options.log;
    this.#lines = new LineSplitter({ maxLineBytes: MAX_CLIENT_MESSAGE_BYTES, onLine: (line) => this.#receive(line), onOversized: (line) => this.#refuseOversized(line) });
  }

  async start(): Promise<void> {
    this.#stdin.on("data", this.#onData);
    this.#stdin.on("error", this.#onError);
  }

  async close(): Promise<void> {
    this.#stdin.off("data", this.#onData);
    this.#stdin.off("error", this.#onError);
    if (this.#stdin.listenerCount("data") === 0) this.#stdin.pause();
    this.#lines.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const line = `${JSON.stringify(message)}\n`;
    // The process's stdout is reserved for lllm's own output (util/ownStdout.ts): the protocol is that.
    if (!(this.#stdout === process.stdout ? writeOwnStdout(line) : this.#stdout.write(line))) {
      this.#drained ??= new Promise<void>((resolve) => {
        // A pipe that closes never drains: either ends the wait, and both listeners go.
        const done = (): void => {
          this.#stdout.off("drain", done);
          this.#stdout.off("close", done);
          resolve();
        };
        this.#stdout.on("drain", done);
        this.#stdout.on("close", done);
      }).finally(() => {
        this.#drained = undefined;
      });
    }
    return this.#drained ?? Promise.resolve();
  }

  #receive(line: string): void {
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch (error) {
      this.#answerError(null, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(data);
    if (!parsed.success) {
      this.#answerError(idOf(data), ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 request, notification or response");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #refuseOversized(line: OversizedLine): void {
    const message = `message of ${line.bytes} bytes is over the limit of ${MAX_CLIENT_MESSAGE_BYTES} bytes; it was dropped`;
    this.#log(`lllm: ${message}${line.id === undefined ? "" : ` (request id ${JSON.stringify(line.id)})`}; still serving`);
    this.#answerError(line.id ?? null, ErrorCode.InvalidRequest, `Invalid Request: ${message}`);
  }

  #answerError(id: string | number | null, code: number, message: string): void {
    // JSON-RPC answers an unidentifiable request with id null, which the SDK's message type does not allow.
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

function idOf(data: unknown): string | number | null {
  const id = typeof data === "object" && data !== null ? (data as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
