/**
 * What the tool loop and the program bridge ask before each tool call, and tell after it: the small interface
 * through which they see the run's budget (`RunBudget` implements it). `beforeToolCall` throws a
 * `RunLimitError` when the call would cross a limit (or the run's time is up), and the call does not run.
 */
export interface ToolBudget {
  beforeToolCall(call: { agent: string; tool: string }): void;
  afterToolCall(call: { agent: string; tool: string; durationMs: number; failed: boolean }): void;
}
