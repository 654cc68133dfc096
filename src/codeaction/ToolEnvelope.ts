/** A large result, as the program's handle sees it (`ToolResult` in the prelude). */
export interface HandleInfo {
  ref: string;
  size: number;
  mime: string;
  /** A preview of the start. */
  text: string;
}

/** The error classes a bridged call can raise in the program (defined by the prelude). */
export type ProgramErrorType = "ToolError" | "MCPToolError" | "ToolApprovalDenied" | "ToolBudgetExceeded";

/**
 * The answer to one bridged tool call, as the prelude reads it: a value, a handle to a large value, or an error
 * it raises with `.code`. Tool errors travel as answers, not bridge errors, so that they keep their code.
 */
export type ToolEnvelope =
  | { ok: true; value: unknown }
  | { ok: true; handle: HandleInfo }
  | { ok: false; error: { type: ProgramErrorType; code: string; message: string } };
