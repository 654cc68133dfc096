import { ToolError } from "../errors.js";
import type { ErrorCode } from "../errors.js";

/**
 * A failed proxy call. These reach the model as `Error: <message>` text from `run_python` (CALL_API raises them),
 * so the message itself says what to change; `code` is for programs (`proxy_unknown`, `proxy_endpoint_unknown`,
 * `proxy_param_missing`, `proxy_path_value`, `proxy_param_invalid`, `proxy_key_missing`, `proxy_http_error`,
 * `proxy_network_error`, `proxy_timeout`, `proxy_handler_failed`, `proxy_redirect_refused`, `proxy_response_too_large`).
 */
export class ProxyCallError extends ToolError {
  /** The HTTP status, for `proxy_http_error`. */
  readonly status: number | undefined;
  /**
   * The exception CALL_API raises in Python (see `answerCall`): a bad path value is seed 000's `ValueError`
   * (Step 12), so that `except ValueError` catches it; anything else is a `ProxyCallError` (a RuntimeError).
   */
  readonly pythonType: string;

  constructor(code: ErrorCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.status = options.status;
    this.pythonType = code === "proxy_path_value" ? "ValueError" : "ProxyCallError";
  }
}
