/**
 * An answer other than success, in the shape OpenAI's APIs use (`{error: {message, type, code, param}}`), which every
 * OpenAI client reads. A wire error (an HTTP status and a code the client reads), kept apart from lllm's own errors:
 * a route throws one, the server writes it.
 */
export class HttpError extends Error {
  readonly status: number;
  /** OpenAI's error `type`: `invalid_request_error`, `authentication_error`, `rate_limit_error`, `server_error`. */
  readonly type: string;
  /** A machine-readable code: `model_not_found`, `max_cost`, …; null when the status says it all. */
  readonly code: string | null;
  /** The request field at fault (`messages[2].content`), for a bad request. */
  readonly param: string | null;
  /** Headers sent with the answer (`Retry-After`). */
  readonly headers: Record<string, string>;
  /** Fields added to the error object (a limit's answer so far). */
  readonly extra: Record<string, unknown>;

  constructor(status: number, message: string, options: { type?: string; code?: string | null; param?: string | null; headers?: Record<string, string>; extra?: Record<string, unknown> } = {}) {
    super(message);
    this.status = status;
    this.type = options.type ?? defaultType(status);
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  /** The body, as OpenAI writes it. */
  toJSON(): { error: Record<string, unknown> } {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param, ...this.extra } };
  }
}

/** A bad request, naming the field at fault. */
export function badRequest(message: string, param: string | null, code: string | null = null): HttpError {
  return new HttpError(400, message, { param, code });
}

function defaultType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
