import { InterruptedError, type RunLimitName } from "../errors.js";
import type { RunLimits } from "../limits/index.js";
import type { ResponseFormat } from "../providers/Model.js";
import type { ServedRunInfo } from "../store/RunRecord.js";
import type { ClientToolSpec } from "./ClientTool.js";
import { historyOf, type Conversation } from "./Conversation.js";
import { badRequest, HttpError } from "./HttpError.js";
import { requestLimits } from "./requestLimits.js";
import type { RouteRequest } from "./Route.js";
import type { ServeContext } from "./ServeContext.js";
import type { ServedModel } from "./ServedModels.js";
import type { RunHandle } from "./RunHandle.js";
import { ServedRun, type ClientToolChoice, type RunListener, type RunOutcome, type ServedRunOptions } from "./ServedRun.js";

/** What a protocol asks of a run, translated from its wire format. */
export interface RunSpec {
  model: ServedModel;
  conversation: Conversation;
  clientTools?: ClientToolSpec[];
  toolChoice?: ClientToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  modelArgs?: Record<string, unknown>;
  /** The client's `metadata` (kept in the record; `lllm_max_*` keys lower the limits). */
  metadata?: Record<string, string>;
  /** The client's `user`. */
  user?: string;
  stream: boolean;
  /** `chat.completions`, `responses`: kept in the record. */
  route: string;
  /** The id of the answer on the wire (`chatcmpl-…`, `resp_…`). */
  responseId: string;
}

/** How a protocol runs a request, besides what it asks. */
export interface RunRequestOptions {
  /** Receives the streamed text (and agent events) until the run pauses or ends. */
  listener?: RunListener;
  /** Called once the request has a place and its run (a stream's headers go then). */
  onAdmitted?: (run: RunHandle) => void;
  /**
   * A paused run to go on with, which the caller took from the paused runs (an A2A task's approval), and how to
   * resume it once the request has a place; put back when the request cannot wait for one.
   */
  continuing?: { run: RunHandle; resume: (run: RunHandle) => void };
  /** The id a run paused at a call that needs approval is kept under in the paused runs (`askApproval`). */
  approvalId?: string;
  /** Ask the client to approve calls the server's --approve refuses (A2A's input-required). */
  askApproval?: boolean;
  /** The client going away cancels the run; default true (an A2A task sent to run in the background: false). */
  cancelOnClose?: boolean;
}

/**
 * Run a request: a new run of the model, or the paused run its tool results (or its approval) continue. Waits for
 * a place to run (429 when the line is full), starts or resumes the run with the listener receiving the streamed
 * text, and returns when the run pauses (kept for the next request: at its client's tool calls, or at a call that
 * waits for approval) or ends. A closed connection cancels the run.
 */
export async function runRequest(request: RouteRequest, context: ServeContext, spec: RunSpec, options: RunRequestOptions = {}): Promise<{ run: RunHandle; outcome: RunOutcome }> {
  if (context.draining) throw new HttpError(503, "the server is stopping and takes no new runs", { code: "server_stopping", headers: { "Retry-After": "5", Connection: "close" } });
  const { conversation } = spec;
  let run: RunHandle | undefined = options.continuing?.run;
  // Checked before the request waits for a place: a bad limit header is a 400, whatever the server's load.
  const limits = conversation.toolResults || run ? undefined : requestLimits({ prepared: spec.model.prepared, server: context.limits, headers: request.request.headers, metadata: spec.metadata });
  if (run) {
    // The caller took it.
  } else if (conversation.toolResults) {
    run = await continuedRun(context, spec);
  } else if (conversation.input === undefined) {
    throw badRequest("the conversation has no user turn to answer: the last message must be the user's (or the results of the tool calls the model asked for)", conversation.param, "no_user_message");
  }
  let release: (() => void) | undefined;
  try {
    release = await context.admission.acquire(options.cancelOnClose === false ? undefined : request.closed);
  } catch (error) {
    if (run) context.paused.putBack(run);
    throw error;
  }
  try {
    if (!run) run = startRun(request, context, spec, limits ?? { limits: {}, sources: {} }, options.askApproval === true);
    options.onAdmitted?.(run);
    const current = run;
    const onClose = (): void => current.abort(new InterruptedError("interrupted", "the client closed the connection"));
    if (options.cancelOnClose !== false) request.closed.addEventListener("abort", onClose, { once: true });
    const next = run.next(options.listener);
    if (options.continuing) options.continuing.resume(run);
    else if (conversation.toolResults) run.resume(conversation.toolResults);
    const outcome = await next;
    request.closed.removeEventListener("abort", onClose);
    if (outcome.type === "paused") context.paused.add(run, outcome.calls.map((call) => call.id));
    else if (outcome.type === "approval" && options.approvalId !== undefined) context.paused.add(run, [options.approvalId]);
    return { run, outcome };
  } finally {
    release();
  }
}

/** The paused run the request's tool results answer, with every result it waits for (400 otherwise). */
async function continuedRun(context: ServeContext, spec: RunSpec): Promise<RunHandle> {
  const results = spec.conversation.toolResults!;
  const ids = [...results.keys()];
  let run: RunHandle | undefined;
  for (const id of ids) if ((run = context.paused.take(id))) break;
  if (!run && context.queue) {
    // Paused on a worker through another server of the pool: taken over here.
    run = await context.queue.adopt(ids);
    if (run) track(context, run);
  }
  if (!run) {
    throw badRequest(`no run waits for the results of tool call \`${ids[0]}\`: it ended (its results did not come within --pending-ttl, more runs waited than --max-paused, or the server restarted) or never was; send the conversation again ending with a user message`, spec.conversation.param, "tool_call_not_found");
  }
  const missing = run.missingResults(results);
  const problem = run.model !== spec.model ? `the run waiting for these results is of model \`${run.model.id}\`, not \`${spec.model.id}\`` : missing.length > 0 ? `the results of tool call${missing.length === 1 ? "" : "s"} ${missing.map((id) => `\`${id}\``).join(", ")} are missing: the run waits for every call it asked for` : undefined;
  if (problem) {
    context.paused.putBack(run);
    throw badRequest(problem, spec.conversation.param, "tool_results_incomplete");
  }
  return run;
}

function startRun(request: RouteRequest, context: ServeContext, spec: RunSpec, { limits, sources }: { limits: RunLimits; sources: Partial<Record<RunLimitName, string>> }, askApproval: boolean): RunHandle {
  const served: ServedRunInfo = {
    route: spec.route,
    model: spec.model.id,
    client: {
      ...(spec.user !== undefined ? { user: spec.user } : {}),
      ...(spec.metadata !== undefined ? { metadata: spec.metadata } : {}),
      ...(request.client.address !== undefined ? { address: request.client.address } : {}),
      ...(request.client.userAgent !== undefined ? { user_agent: request.client.userAgent } : {}),
    },
    response_id: spec.responseId,
    ...(typeof request.request.headers["x-conversation-id"] === "string" ? { conversation_id: request.request.headers["x-conversation-id"] } : {}),
  };
  const options: ServedRunOptions = {
    model: spec.model,
    input: spec.conversation.input ?? "",
    ...(spec.conversation.inputMedia ? { inputMedia: spec.conversation.inputMedia } : {}),
    history: historyOf(spec.conversation),
    ...(spec.clientTools ? { clientTools: spec.clientTools } : {}),
    ...(spec.toolChoice ? { toolChoice: spec.toolChoice } : {}),
    ...(spec.parallelToolCalls !== undefined ? { parallelToolCalls: spec.parallelToolCalls } : {}),
    ...(spec.responseFormat ? { responseFormat: spec.responseFormat } : {}),
    ...(spec.modelArgs ? { modelArgs: spec.modelArgs } : {}),
    limits,
    limitSources: sources,
    served,
    approve: context.approve,
    ...(askApproval ? { askApproval } : {}),
    stream: spec.stream,
    log: context.log,
    environmentSecrets: context.environmentSecrets,
    warn: context.warn,
  };
  const run = context.queue ? context.queue.createRun(options) : new ServedRun(options);
  track(context, run);
  run.start();
  return run;
}

/** Kept among the server's runs until it ends (stopping waits for them), and counted in the metrics then. */
function track(context: ServeContext, run: RunHandle): void {
  context.runs.add(run);
  void run.done.then((ended) => {
    context.runs.delete(run);
    context.metrics.spent(run.model.id, ended.usage, ended.cost);
  });
}
