import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { signalGroup, trackChild, untrackChild } from "./childProcesses.js";
import { LineSplitter, type OversizedLine } from "./LineSplitter.js";

/** The largest message lllm reads from a server (the SDK's own stdio limit): a bigger one is dropped, not kept. */
export const MAX_SERVER_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Marks the error answered in place of a response that was too large (`McpError.data.reason`). */
export const MESSAGE_TOO_LARGE = "message_too_large";
/** After stdin is closed, how long a server has to exit on its own before SIGTERM. */
const STDIN_GRACE_MS = 1000;
/** After SIGTERM, how long a server's group has before SIGKILL. */
const TERM_GRACE_MS = 1000;
/** After the server exited, how long its stdout may take to end (a process outside its group may hold it). */
const DRAIN_MS = 500;

export interface StdioProcessParameters {
  command: string;
  args: string[];
  /** Added to the SDK's default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

/**
 * The client side of a stdio MCP server, in place of the SDK's `StdioClientTransport`, for what that one cannot
 * do: the server leads its own process group (`detached`), so stopping it stops whatever it started; stopping
 * escalates from closing stdin to SIGTERM to SIGKILL on the whole group; the end of the connection is the
 * server's exit, not the end of its pipes, which a child that inherited them may hold open forever; and a
 * message over the size limit is answered as an error for the request it belongs to instead of closing the
 * connection.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr; available before `start()` so that nothing it writes early is lost. */
  readonly stderr = new PassThrough();
  readonly #parameters: StdioProcessParameters;
  #child: ChildProcessWithoutNullStreams | undefined;
  #exited: Promise<void> = Promise.resolve();
  #hasExited = false;
  #ended: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  /** Settles at the next `drain` while the server's stdin is full. */
  #drained: Promise<void> | undefined;
  /** Requests sent and not answered yet, to tell which one an oversized answer belonged to. */
  readonly #pending = new Set<string | number>();
  readonly #lines = new LineSplitter({
    maxLineBytes: MAX_SERVER_MESSAGE_BYTES,
    onLine: (line) => this.#dispatch(line),
    onOversized: (line) => this.#answerOversized(line),
  });

  constructor(parameters: StdioProcessParameters) {
    this.#parameters = parameters;
  }

  /** The server's pid (and process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error("StdioProcessTransport already started");
    const child = spawn(this.#parameters.command, this.#parameters.args, {
      env: { ...getDefaultEnvironment(), ...this.#parameters.env },
      cwd: this.#parameters.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.stdout.on("data", (chunk: Buffer) => this.#lines.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.stderr.write(chunk));
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on("error", (error) => this.onerror?.(error));
    return new Promise((resolve, reject) => {
      child.once("error", (error) => {
        this.#finish();
        reject(error);
      });
      child.once("spawn", () => {
        trackChild({ pid: child.pid!, terminate: () => this.#terminate() });
        child.once("exit", () => void this.#afterExit());
        resolve();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || !stdin.writable || this.#hasExited) return Promise.reject(new Error("Not connected"));
    if ("method" in message && "id" in message) this.#pending.add(message.id);
    // One `drain` listener for all writes that wait: many calls at once must not pile up listeners.
    if (!stdin.write(`${JSON.stringify(message)}\n`)) {
      this.#drained ??= new Promise<void>((resolve) => {
        // A pipe that closes never drains: either ends the wait, and both listeners go.
        const done = (): void => {
          stdin.off("drain", done);
          stdin.off("close", done);
          resolve();
        };
        stdin.on("drain", done);
        stdin.on("close", done);
      }).finally(() => {
        this.#drained = undefined;
      });
    }
    return this.#drained ?? Promise.resolve();
  }

  /** Close stdin, then SIGTERM, then SIGKILL the server's group; resolves once it has exited and is cleaned up. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const child = this.#child;
      if (!child || child.pid === undefined) return;
      child.stdin.end();
      if (!(await this.#exitWithin(STDIN_GRACE_MS))) await this.#terminate();
      await this.#ended;
    })();
    return this.#closing;
  }

  /** SIGTERM the group, SIGKILL it if the server has not exited after a grace period. */
  async #terminate(): Promise<void> {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    if (!this.#hasExited) {
      signalGroup(pid, "SIGTERM");
      if (!(await this.#exitWithin(TERM_GRACE_MS))) signalGroup(pid, "SIGKILL");
      await this.#exited;
    }
    await this.#ended;
  }

  #exitWithin(ms: number): Promise<boolean> {
    if (this.#hasExited) return Promise.resolve(true);
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      this.#exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * The server has exited: what is left of its group goes too (a child that inherited its stdio would keep the
   * pipes, and lllm, alive), its last output is read, and the connection ends.
   */
  #afterExit(): Promise<void> {
    this.#ended ??= (async () => {
      this.#hasExited = true;
      const child = this.#child!;
      signalGroup(child.pid!, "SIGKILL");
      if (!child.stdout.readableEnded) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => child.stdout.once("end", resolve)), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
        clearTimeout(timer);
      }
      this.#finish();
    })();
    return this.#ended;
  }

  /** Release the pipes (never wait on them) and report the end of the connection. */
  #finish(): void {
    const child = this.#child;
    if (child) {
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy();
      if (child.pid !== undefined) untrackChild(child.pid);
    }
    this.stderr.end();
    this.#lines.clear();
    this.onclose?.();
  }

  #dispatch(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch (error) {
      this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${line.slice(0, 200)}`, { cause: error }));
      return;
    }
    if (!("method" in message) && "id" in message && message.id !== undefined) this.#pending.delete(message.id);
    this.onmessage?.(message);
  }

  /**
   * A message over the limit was dropped. The SDK's own transport closes the connection there, which every
   * caller then reads as "the server closed the connection"; instead the request it answered (its id is at one
   * end of the line) gets an error saying so, and the connection stays up.
   */
  #answerOversized(line: OversizedLine): void {
    const id = line.id;
    // Without an id, the only request waiting is the one it answered; a notification (it names a method) answers none.
    const ids = id !== undefined && this.#pending.has(id) ? [id] : id === undefined && !line.hasMethod && this.#pending.size === 1 ? [...this.#pending] : [];
    if (ids.length === 0) {
      this.onerror?.(new Error(`the server sent a message of ${line.bytes} bytes, over the limit of ${MAX_SERVER_MESSAGE_BYTES} bytes; it was dropped`));
      return;
    }
    for (const each of ids) {
      this.#pending.delete(each);
      this.onmessage?.({
        jsonrpc: "2.0",
        id: each,
        error: {
          code: ErrorCode.InternalError,
          message: `the server's answer is larger than ${MAX_SERVER_MESSAGE_BYTES / 2 ** 20} MB (the limit on one message), so it was dropped`,
          data: { reason: MESSAGE_TOO_LARGE, bytes: line.bytes, limit: MAX_SERVER_MESSAGE_BYTES },
        },
      });
    }
  }
}
