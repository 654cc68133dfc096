import { BudgetError, InterruptedError, LllmError, ModelBehaviorError, ProviderError, RunLimitError } from "../errors.js";
import { redactSecrets } from "../util/redact.js";
import { HttpError } from "./HttpError.js";

/**
 * A failed run as the client reads it. A limit reached is a 400 whose `code` names the limit (`max_cost`,
 * `max_tokens`, `max_tool_calls`, `max_duration`; `tool_rounds_exhausted` for an agent's round cap) with the
 * answer so far in `partial_output`; a model that failed or misbehaved is a 502; a run stopped by the server
 * (stopping, or a client that never sent its tool results) a 503; an input the tactic's schema refuses a 400;
 * anything else a 500. Messages are lllm's own,
 * redacted of every known secret, never a stack.
 */
export function runErrorToHttp(error: unknown, partialOutput: string): HttpError {
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  const partial = partialOutput === "" ? {} : { partial_output: redactSecrets(partialOutput) };
  if (error instanceof RunLimitError) return new HttpError(400, message, { type: "limit_reached", code: error.limit, extra: { ...partial, limit: { name: error.limit, value: error.value, spent: error.spent } } });
  if (error instanceof BudgetError) return new HttpError(400, message, { type: "limit_reached", code: error.code, extra: partial });
  if (error instanceof InterruptedError) return new HttpError(503, message, { code: "run_cancelled" });
  // A model, or the worker of the queue that ran the request, failed: the server in front of them answers 502.
  if (error instanceof ProviderError || error instanceof ModelBehaviorError || (error instanceof LllmError && error.code === "serve_worker_lost")) return new HttpError(502, message, { type: "upstream_error", code: error.code });
  // Tool results for a run that ended on its worker: as for a run this server does not know (the client sends again).
  if (error instanceof LllmError && error.code === "serve_run_gone") return new HttpError(400, message, { code: "tool_call_not_found" });
  // The client's input does not fit the tactic's `input` schema: the client's to fix.
  if (error instanceof LllmError && error.code === "input_invalid") return new HttpError(400, message, { code: error.code, param: "messages" });
  // The server's queue (its Redis) is gone: the server stops; a client may try again on another. Or every live worker
  // of the queue refuses the tactic: the request fails at once rather than wait for none; it may work once one takes it.
  if (error instanceof LllmError && (error.code === "queue_unreachable" || error.code === "queue_refused")) return new HttpError(503, message, { code: error.code });
  if (error instanceof LllmError) return new HttpError(500, message, { code: error.code });
  return new HttpError(500, "internal error: the run failed unexpectedly; see the server's log", { code: "internal_error" });
}

/** An outcome a route never asks for (an approval pause outside A2A): a defect, answered as a 500. */
export function unexpected(outcome: string): HttpError {
  return new HttpError(500, `internal error: the run paused (${outcome}) where it cannot; see the server's log`, { code: "internal_error" });
}
