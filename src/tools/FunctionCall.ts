import { randomBytes } from "node:crypto";

/** The fields of a `FunctionCall`; only `name` is required. */
export interface FunctionCallOptions {
  /** The provider's call id; generated as `call_<random>` when absent (e.g. a call made by hand). */
  id?: string;
  name: string;
  /** The arguments the model sent; missing means none. */
  arguments?: Record<string, unknown>;
  result?: unknown;
  resultStr?: string;
  error?: string;
}

/**
 * One invocation of a tool, as the agent loop makes it: the name and arguments the model sent, and after
 * `FunctionTool.call()` the raw `result`, the text the model reads back (`resultStr`), or the `error` message.
 */
export class FunctionCall {
  id: string;
  name: string;
  /** Exactly what the model sent; defaults filled in for the tool are not written back here. */
  arguments: Record<string, unknown>;
  /** What the tool's `run` returned (set on success). */
  result?: unknown;
  /** The text the model reads back: the default result block, the processor's text, or `Error: <message>`. */
  resultStr?: string;
  /** The failure message when the tool threw or the arguments were invalid; `resultStr` is then `Error: <error>`. */
  error?: string;

  constructor(options: FunctionCallOptions) {
    this.id = options.id ?? `call_${randomBytes(12).toString("hex")}`;
    this.name = options.name;
    this.arguments = options.arguments ?? {};
    if (options.result !== undefined) this.result = options.result;
    if (options.resultStr !== undefined) this.resultStr = options.resultStr;
    if (options.error !== undefined) this.error = options.error;
  }
}
