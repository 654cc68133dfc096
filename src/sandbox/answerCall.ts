import { LllmError } from "../errors.js";
import { BridgeError } from "./BridgeError.js";
import type { HostMessage } from "./KernelMessage.js";

/** A function Python may call through the bridge: JSON arguments in, a JSON value (or a promise of one) out. */
export type HostFunction = (args: unknown) => unknown;

/**
 * Run the host function a kernel asked for and build the reply. Never throws: whatever goes wrong becomes an error
 * that raises in the Python program, where the code that made the call can handle it.
 */
export async function answerCall(functions: Readonly<Record<string, HostFunction>>, id: number, name: string, args: unknown): Promise<HostMessage> {
  // The name comes from model-written code: only own properties count, never Object.prototype's.
  const run = Object.hasOwn(functions, name) ? functions[name] : undefined;
  if (typeof run !== "function") {
    const known = Object.keys(functions).sort();
    const message = `no host function named ${JSON.stringify(name)}; available: ${known.length > 0 ? known.join(", ") : "none"}`;
    return { type: "reply", id, ok: false, error: { type: "NameError", message } };
  }
  try {
    const value = await run(args);
    return { type: "reply", id, ok: true, value: value ?? null };
  } catch (error) {
    return { type: "reply", id, ok: false, error: { type: pythonTypeOf(error), message: messageOf(error) } };
  }
}

/**
 * The Python exception for what a host function threw: a `BridgeError`'s choice, or any error's own `pythonType`
 * (a proxy's bad path value is `ValueError`, see ProxyCallError), else its lllm error name, else `ToolError`.
 */
function pythonTypeOf(error: unknown): string {
  if (error instanceof BridgeError) return error.pythonType;
  const named = error instanceof Error ? (error as { pythonType?: unknown }).pythonType : undefined;
  if (typeof named === "string" && named !== "") return named;
  if (error instanceof LllmError) return error.name;
  return "ToolError";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
