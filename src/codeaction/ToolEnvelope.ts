import type { ResourceLinkBlock } from "../tools/index.js";

/** A large result, as the program's handle sees it (`ToolResult` in the prelude). */
export interface HandleInfo {
  ref: string;
  size: number;
  mime: string;
  /** A preview of the start. */
  text: string;
}

/**
 * One of a result's files (seed 001's `.files`): an image, audio or embedded resource stored as an artifact (a
 * handle in the program), or a link to a resource, which has no bytes to store (a dict in the program).
 */
export type ProgramFile = HandleInfo | ResourceLinkBlock;

/** The error classes a bridged call can raise in the program (defined by the prelude). */
export type ProgramErrorType = "ToolError" | "MCPToolError" | "ToolApprovalDenied" | "ToolBudgetExceeded";

/**
 * The answer to one bridged tool call, as the prelude reads it: a value, a handle to a large value, or an error
 * it raises with `.code`. Tool errors travel as answers, not bridge errors, so that they keep their code.
 */
export type ToolEnvelope =
  | { ok: true; value: unknown; files?: ProgramFile[] }
  | { ok: true; handle: HandleInfo; files?: ProgramFile[] }
  | { ok: false; error: { type: ProgramErrorType; code: string; message: string } };
