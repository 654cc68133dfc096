import { formatResult } from "../tools/formatResult.js";
import { FunctionTool } from "../tools/FunctionTool.js";
import type { FunctionCall } from "../tools/FunctionCall.js";
import type { ToolContext } from "../tools/ToolContext.js";

/** A function tool a client declared in its request: it runs on the client, not here. */
export interface ClientToolSpec {
  name: string;
  description?: string;
  /** Its JSON Schema, as the client wrote it (sent to the model as it is). */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/**
 * What a client tool's call waits for: the client's result text, given by the client's next request. Rejects when
 * the run is cancelled (the client went away, the result never came within `--pending-ttl`, the server stops).
 */
export type ClientResultWaiter = (call: FunctionCall, signal: AbortSignal | undefined) => Promise<string>;

function notHere(): never {
  throw new Error("a client's tool runs on the client");
}

/**
 * A client's function tool as the agent loop sees it: a tool like any other, offered to the model with the client's
 * own declaration, whose call waits for the client's result (see `ServedRun`, which answers the request with the
 * call and gives the result when the next request brings it). The loop never learns that the result came from
 * another request: it awaits a tool, as it awaits a slow one.
 */
export class ClientTool extends FunctionTool {
  readonly #spec: ClientToolSpec;
  readonly #wait: ClientResultWaiter;

  constructor(spec: ClientToolSpec, wait: ClientResultWaiter) {
    // The schema is the client's to enforce: lllm checks nothing of the arguments (the client receives them as the
    // model wrote them), so the tool itself takes any object.
    // It has a `run` so that it is not taken for a declaration to bind by name; `call` below is what runs.
    super({ name: spec.name, description: spec.description ?? "", properties: {}, required: [], strict: false, run: notHere });
    this.#spec = spec;
    this.#wait = wait;
  }

  override toTool(): ReturnType<FunctionTool["toTool"]> {
    const parameters = (this.#spec.parameters ?? { type: "object", properties: {} }) as unknown as FunctionTool["parameters"];
    return { type: "function", function: { name: this.name, description: this.description, parameters, strict: this.#spec.strict ?? false } };
  }

  override async call(call: FunctionCall, context: ToolContext = {}): Promise<FunctionCall> {
    delete call.error;
    call.result = await this.#wait(call, context.signal);
    // The model reads a client's result in the same frame as any tool's.
    call.resultStr = formatResult(call);
    return call;
  }
}
