import { BudgetError, InterruptedError, LllmError, ModelBehaviorError, ProviderError, RunLimitError } from "../errors.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { redactSecrets } from "../util/redact.js";
import { HttpError } from "./HttpError.js";
import { WorkerLostError } from "./queue/WorkerLostError.js";

/** What a route knows of the request whose run failed. */
export interface RunErrorContext {
  /** The answer so far (a limit's `partial_output`). */
  partialOutput: string;
  /** The id the client holds (`chatcmpl-…`, `resp_…`, an A2A task's id): named in the body and in the log line. */
  requestId: string;
  /** The server's log (stderr): where the details the client is not told go. */
  log: (message: string) => void;
}

/**
 * A failed run as the client reads it. A limit reached is a 400 whose `code` names the limit (`max_cost`,
 * `max_tokens`, `max_tool_calls`, `max_duration`; `tool_rounds_exhausted` for an agent's round cap) with the
 * answer so far in `partial_output`; a model that misbehaved is a 502 saying what it did; a run stopped by the server
 * (stopping, or a client that never sent its tool results) a 503; an input the tactic's schema refuses a 400.
 *
 * What failed behind the server (the model provider, a worker of the queue, its Redis, the server's own set-up) is
 * the operator's to fix, and its message names the operator's topology (the provider's URL, a key's variable, a
 * worker's host and pid, the queue's address): the client reads that it failed, its `code` and the request's id,
 * and the details go to the server's log under the same id.
 */
export function runErrorToHttp(error: unknown, context: RunErrorContext): HttpError {
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  const { partialOutput, requestId } = context;
  const partial = partialOutput === "" ? {} : { partial_output: redactSecrets(partialOutput) };
  if (error instanceof RunLimitError) return new HttpError(400, message, { type: "limit_reached", code: error.limit, extra: { ...partial, limit: { name: error.limit, value: error.value, spent: error.spent } } });
  if (error instanceof BudgetError) return new HttpError(400, message, { type: "limit_reached", code: error.code, extra: partial });
  if (error instanceof InterruptedError) return new HttpError(503, message, { code: "run_cancelled" });
  if (error instanceof ModelBehaviorError) return new HttpError(502, message, { type: "upstream_error", code: error.code });
  // Tool results for a run that ended on its worker: as for a run this server does not know (the client sends again).
  if (error instanceof LllmError && error.code === "serve_run_gone") return new HttpError(400, message, { code: "tool_call_not_found" });
  // The client's input does not fit the tactic's `input` schema: the client's to fix.
  if (error instanceof LllmError && error.code === "input_invalid") return new HttpError(400, message, { code: error.code, param: "messages" });
  const code = error instanceof LllmError ? error.code : "internal_error";
  context.log(`request ${requestId} failed (${code}): ${escapeControlCharacters(message, { all: true })}`);
  const seeLog = `the server's log has the details (request ${requestId})`;
  // The provider refused the request as it was (too long for the model's context, an image it cannot take, content it
  // declines): the client may change it, so it reads the provider's own words, as a 400 (what OpenAI-compatible
  // gateways do), without the rest of the message (the provider's address).
  if (error instanceof ProviderError && error.upstream !== undefined && REQUEST_REFUSED.has(error.upstream.status)) {
    return new HttpError(400, `the model provider refused the request (HTTP ${error.upstream.status}): ${redactSecrets(error.upstream.message)}; ${seeLog}`, { type: "invalid_request_error", code });
  }
  // A model, or the worker of the queue that ran the request, failed: the server in front of them answers 502.
  if (error instanceof ProviderError) return new HttpError(502, `the model provider of this tactic failed (${code}); ${seeLog}`, { type: "upstream_error", code });
  if (error instanceof LllmError && error.code === "serve_worker_lost") {
    const sent = error instanceof WorkerLostError && error.streamedCharacters > 0 ? ` (${error.streamedCharacters} characters of it had been sent)` : "";
    return new HttpError(502, `the worker running this request stopped before the answer was complete${sent}; send the request again; ${seeLog}`, { type: "upstream_error", code });
  }
  // The server's queue (its Redis) is gone: the server stops; a client may try again on another. Or every live worker
  // of the queue refuses the tactic: the request fails at once rather than wait for none; it may work once one takes it.
  if (code === "queue_unreachable") return new HttpError(503, `the server's queue cannot be reached; try again later; ${seeLog}`, { code });
  if (code === "queue_refused") return new HttpError(503, `no worker of the server's queue takes this tactic now; try again later; ${seeLog}`, { code });
  if (error instanceof LllmError) return new HttpError(500, `the run failed (${code}); ${seeLog}`, { code });
  return new HttpError(500, `internal error: the run failed unexpectedly; ${seeLog}`, { code: "internal_error" });
}

/** Provider statuses that say the request itself was refused (not the key, the quota or the rate). */
const REQUEST_REFUSED = new Set([400, 413, 422]);

/** An outcome a route never asks for (an approval pause outside A2A): a defect, answered as a 500. */
export function unexpected(outcome: string): HttpError {
  return new HttpError(500, `internal error: the run paused (${outcome}) where it cannot; see the server's log`, { code: "internal_error" });
}
