import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { nestedDeeperThan } from "../util/nestedDeeperThan.js";

/**
 * The deepest nesting of arrays and objects lllm takes in one message of a server. A real one is a few dozen levels
 * deep (a tool's schema, its structured result); a message of `[[[[…` thousands deep overflows the stack of every
 * recursive walk lllm makes over a result (redaction, the model's text, the run log) and would end the run.
 */
export const MAX_MESSAGE_DEPTH = 512;
/** Marks the error answered in place of a response nested too deeply (`McpError.data.reason`). */
export const MESSAGE_TOO_DEEP = "message_too_deep";

/**
 * A transport whose incoming messages are nested at most `MAX_MESSAGE_DEPTH` levels, whatever carries them (stdio,
 * Streamable HTTP, SSE). A response nested deeper becomes an error answer to its request (the call fails with a
 * message saying why, and the connection stays up); a request of the server gets an error answer; a notification
 * is dropped. Everything else goes through to and from the transport it wraps.
 */
export class DepthGuardTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #inner: Transport;

  constructor(inner: Transport) {
    this.#inner = inner;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  start(): Promise<void> {
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => this.onerror?.(error);
    this.#inner.onmessage = (message, extra) => this.#receive(message, extra);
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  #receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (!nestedDeeperThan(message, MAX_MESSAGE_DEPTH)) return this.onmessage?.(message, extra);
    const text = `the server's message is nested deeper than ${MAX_MESSAGE_DEPTH} levels (the limit), so it was dropped`;
    const id = "id" in message ? message.id : undefined;
    if ("method" in message) {
      if (id !== undefined) this.#inner.send({ jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: `lllm refused the request: ${text}` } }).catch(() => {});
      this.onerror?.(new Error(text));
      return;
    }
    if (id === undefined) return;
    this.onmessage?.({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message: text, data: { reason: MESSAGE_TOO_DEEP, limit: MAX_MESSAGE_DEPTH } } }, extra);
  }
}
