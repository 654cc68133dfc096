/**
 * Throw it from a host function to choose the exception Python raises: `new BridgeError("ToolBudgetExceeded",
 * "...")` raises `ToolBudgetExceeded` (a RuntimeError subclass, importable with
 * `from lllm_bridge import error_class`), and a builtin name such as `ValueError` raises the builtin. Any other
 * error raises as its lllm error name (`ToolError`, `BudgetError`), else as `ToolError`.
 */
export class BridgeError extends Error {
  /** The Python exception class name. */
  readonly pythonType: string;

  constructor(pythonType: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BridgeError";
    this.pythonType = pythonType;
  }
}
