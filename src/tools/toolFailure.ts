import type { FunctionCall } from "./FunctionCall.js";

/**
 * What a tool threw, kept beside its call for the person debugging (`--verbose` prints the stack and the tool
 * file's line). The model only reads `call.error`; this record is never serialised with the call.
 */
export interface ToolFailure {
  /** The thrown value, as thrown. */
  error: unknown;
  /** The first frame of the stack inside the tool's own file. */
  location?: { file: string; line: number; column?: number };
}

const failures = new WeakMap<FunctionCall, ToolFailure>();

export function recordToolFailure(call: FunctionCall, error: unknown, toolFile?: string): void {
  const location = stackLocation(error, toolFile);
  failures.set(call, { error, ...(location ? { location } : {}) });
}

/** The failure recorded for a call whose tool threw, if any. */
export function toolFailureOf(call: FunctionCall): ToolFailure | undefined {
  return failures.get(call);
}

const FRAME = /\(?((?:file:\/\/)?\/[^():]+|[A-Za-z]:\\[^():]+):(\d+):(\d+)\)?\s*$/;

function stackLocation(error: unknown, toolFile: string | undefined): ToolFailure["location"] {
  const stack = typeof error === "object" && error !== null && typeof (error as { stack?: unknown }).stack === "string" ? (error as { stack: string }).stack : "";
  const frames = stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .flatMap((line) => {
      const match = FRAME.exec(line);
      return match ? [{ file: match[1]!.replace(/^file:\/\//, ""), line: Number(match[2]), column: Number(match[3]) }] : [];
    });
  // Only the tool's own file: a frame inside lllm (a command tool's ToolError) would point at the wrong code.
  return toolFile ? frames.find((frame) => frame.file === toolFile) : undefined;
}
