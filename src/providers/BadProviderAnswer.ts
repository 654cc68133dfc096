/** What went wrong with an answer the server did send. */
export type BadAnswerKind =
  /** Not the JSON an OpenAI-compatible server sends: garbage, HTML, an empty or truncated body, wrong field types. */
  | "bad_response"
  /** Well-formed, but no answer in it: no choices, no text and no tool calls, a stream that stopped early. */
  | "incomplete"
  /** The connection broke while the answer was being read. */
  | "connection_lost"
  /** The answer was larger than the transport reads (`reply_size`). */
  | "too_large";

/**
 * One attempt got an answer that cannot be used. Thrown while reading an answer; `requestWithRetries` retries it
 * when `retryable` (a reset or a garbled body may not happen again; a server that always sends `null` content
 * will) and turns the last one into a `ProviderError` that names the server and the model. Never reaches a caller.
 */
export class BadProviderAnswer extends Error {
  readonly kind: BadAnswerKind;
  readonly retryable: boolean;

  constructor(kind: BadAnswerKind, detail: string, options: { retryable: boolean; cause?: unknown }) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BadProviderAnswer";
    this.kind = kind;
    this.retryable = options.retryable;
  }
}

/** The SDK's error classes this module tells apart (passed in: the SDK is loaded lazily). */
interface SdkErrors {
  APIError: abstract new (...args: never[]) => Error;
  OpenAIError: abstract new (...args: never[]) => Error;
}

/**
 * An error out of the SDK while a request was sent or its answer read, classified: the SDK's HTTP and connection
 * errors and aborts pass unchanged (the retry loop knows them); a JSON parse failure (a truncated, empty or garbage
 * body) and a connection broken mid-answer become a retryable `BadProviderAnswer`. Anything else (a bug) passes
 * unchanged too.
 */
export function classifyReadError(error: unknown, sdk: SdkErrors): unknown {
  if (error instanceof sdk.APIError || isAbort(error)) return error;
  if (error instanceof SyntaxError) {
    return new BadProviderAnswer("bad_response", `the body is not valid JSON (empty, truncated or garbled): ${error.message}`, { retryable: true, cause: error });
  }
  if (isConnectionBreak(error)) {
    return new BadProviderAnswer("connection_lost", `the connection broke while the answer was being read (${describeBreak(error)})`, { retryable: true, cause: error });
  }
  if (error instanceof sdk.OpenAIError) return new BadProviderAnswer("bad_response", error.message, { retryable: true, cause: error });
  return error;
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

const BREAK_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNABORTED"]);

/** undici reports a connection closed mid-body as `TypeError: terminated` with the socket error as its cause. */
function isConnectionBreak(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && BREAK_CODES.has(code)) return true;
    if (current instanceof TypeError && current.message === "terminated") return true;
  }
  return false;
}

function describeBreak(error: unknown): string {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  return innermost instanceof Error ? innermost.message : String(innermost);
}
