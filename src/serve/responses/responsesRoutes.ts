import type { Response, ResponseOutputItem } from "openai/resources/responses/responses";
import type { Message } from "../../agent/index.js";
import { InterruptedError } from "../../errors.js";
import { StreamRedactor } from "../../util/StreamRedactor.js";
import { answerText, unstreamedRest, usageOf } from "../answerText.js";
import { inputMessage } from "../Conversation.js";
import { HttpError } from "../HttpError.js";
import { newWireId } from "../newWireId.js";
import type { Protocol, RouteRequest } from "../Route.js";
import { runErrorToHttp, unexpected } from "../runErrorToHttp.js";
import { runRequest, type RunSpec } from "../runRequest.js";
import type { ServeContext } from "../ServeContext.js";
import type { RunHandle } from "../RunHandle.js";
import type { ClientCall, RunOutcome } from "../ServedRun.js";
import { sendJson } from "../sendJson.js";
import { parseResponsesRequest, type ResponsesRequest } from "./parseResponsesRequest.js";
import { functionCallItem, messageItem, responseObject, type ResponseHead } from "./responseObjects.js";
import { ResponseStream } from "./ResponseStream.js";

/** OpenAI's Responses API (the Open Responses shape): create, read, delete and cancel responses. */
export const responsesProtocol: Protocol = () => [
  { method: "POST", path: "/v1/responses", handle: createResponse },
  { method: "GET", path: "/v1/responses/{id}", handle: getResponse },
  { method: "DELETE", path: "/v1/responses/{id}", handle: deleteResponse },
  { method: "POST", path: "/v1/responses/{id}/cancel", handle: cancelResponse },
];

/** Why a run was cancelled by `POST /v1/responses/{id}/cancel`: its response then reads `cancelled`. */
class CancelledByClient extends InterruptedError {}

async function createResponse(request: RouteRequest, context: ServeContext): Promise<void> {
  const parsed = parseResponsesRequest(await request.body(), context.models, (id) => context.responses.get(id));
  request.setModel(parsed.model.id);
  const head: ResponseHead = { id: newWireId("resp_"), createdAt: Math.floor(Date.now() / 1000), model: parsed.model.id, instructions: parsed.instructions, previousResponseId: parsed.previousResponseId, metadata: parsed.metadata ?? null, echo: parsed.echo };
  const spec: RunSpec = { ...parsed, route: "responses", responseId: head.id };
  const keep = (body: Response, history?: Message[]): void => {
    if (parsed.store) context.responses.save({ id: head.id, model: head.model, body: body as unknown as Record<string, unknown>, ...(history ? { history } : {}) });
  };
  const admitted = (run: RunHandle): void => {
    context.responses.track(head.id, run);
    keep(responseObject(head, { status: "in_progress", output: [] }));
  };
  try {
    if (!parsed.stream) {
      const { run, outcome } = await runRequest(request, context, spec, { onAdmitted: admitted });
      const output: ResponseOutputItem[] = [];
      if (outcome.type === "paused") {
        if (outcome.text !== "") output.push(messageItem(newWireId("msg_"), outcome.text, "completed"));
        output.push(...outcome.calls.map((call) => functionCallItem(newWireId("fc_"), call, "completed")));
      } else if (outcome.type === "finished" && outcome.run.ok) {
        output.push(messageItem(newWireId("msg_"), answerText(outcome.run), "completed"));
      }
      const ended = ending(head, outcome, output, run, context.warn);
      keep(ended.body, ended.history && historyOf(parsed, ended.history));
      if (ended.error && ended.body.status === "failed") throw ended.error;
      return sendJson(request.response, 200, ended.body);
    }
    const stream = new ResponseStream(request.response);
    const redactor = new StreamRedactor();
    const { run, outcome } = await runRequest(request, context, spec, {
      listener: { text: (delta) => stream.text(redactor.push(delta)), event: (event) => event.type === "model_reply" && stream.text(redactor.flush()) },
      onAdmitted: (run) => {
        admitted(run);
        stream.open(responseObject(head, { status: "in_progress", output: [] }));
      },
    });
    stream.text(redactor.flush());
    if (outcome.type === "paused") {
      if (run.streamedSinceCall === "") stream.text(outcome.text);
      stream.functionCalls(outcome.calls);
    } else if (outcome.type === "finished" && outcome.run.ok) {
      stream.text(unstreamedRest(outcome.run, run));
    }
    stream.endText();
    const ended = ending(head, outcome, stream.output, run, context.warn);
    keep(ended.body, ended.history && historyOf(parsed, ended.history));
    stream.finish(ended.body);
  } finally {
    context.responses.track(head.id, undefined);
  }
}

/** The response as the run left it: completed (with its answer, or the function calls it waits for), cancelled or failed. */
function ending(head: ResponseHead, outcome: RunOutcome, output: ResponseOutputItem[], run: RunHandle, log: (message: string) => void): { body: Response; history?: Message | undefined; error?: HttpError } {
  const usage = usageOf(run);
  const agent = run.model.prepared.tactic.config.agent ?? run.model.prepared.agents[0]?.name ?? "assistant";
  if (outcome.type === "paused") return { body: responseObject(head, { status: "completed", output, usage }), history: toolCallTurn(agent, outcome.text, outcome.calls) };
  if (outcome.type !== "finished") return { body: responseObject(head, { status: "failed", output, usage, error: { code: "server_error", message: "internal error" } }), error: unexpected(outcome.type) };
  if (outcome.run.ok) return { body: responseObject(head, { status: "completed", output, usage }), history: { role: "assistant", content: answerText(outcome.run), name: agent } };
  const error = runErrorToHttp(outcome.run.error, { partialOutput: run.lastText, requestId: head.id, log });
  const cancelled = outcome.run.error instanceof CancelledByClient;
  return { body: responseObject(head, { status: cancelled ? "cancelled" : "failed", output, usage, ...(cancelled ? {} : { error: { code: error.code ?? "server_error", message: error.message } }) }), error };
}

function toolCallTurn(agent: string, text: string, calls: ClientCall[]): Message {
  return { role: "tool_call", content: text, name: agent, toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })) };
}

/** The dialog after a response: the one it was asked with (without system turns), then what it answered. */
function historyOf(parsed: ResponsesRequest, answered: Message): Message[] {
  const { conversation } = parsed;
  const input = inputMessage(conversation);
  const last: Message[] = input ? [input] : [...(conversation.toolResults ?? new Map<string, string>())].map(([id, content]): Message => ({ role: "tool", content, name: "tool", toolCallId: id }));
  return [...conversation.turns, ...last, answered];
}

function keptOr404(context: ServeContext, id: string): Record<string, unknown> {
  const kept = context.responses.get(id);
  if (!kept) throw new HttpError(404, `no response \`${id}\` is kept here`, { code: "response_not_found", param: "response_id", type: "invalid_request_error" });
  return kept.body;
}

async function getResponse(request: RouteRequest, context: ServeContext): Promise<void> {
  sendJson(request.response, 200, keptOr404(context, request.params.id!));
}

async function deleteResponse(request: RouteRequest, context: ServeContext): Promise<void> {
  const id = request.params.id!;
  keptOr404(context, id);
  context.responses.delete(id);
  sendJson(request.response, 200, { id, object: "response.deleted", deleted: true });
}

async function cancelResponse(request: RouteRequest, context: ServeContext): Promise<void> {
  const id = request.params.id!;
  const body = keptOr404(context, id);
  const run = context.responses.running(id);
  if (!run) throw new HttpError(400, `response \`${id}\` is ${String(body.status)}: only a response in progress can be cancelled`, { code: "response_not_cancellable", param: "response_id" });
  run.abort(new CancelledByClient("interrupted", "the client cancelled the response"));
  await run.done;
  // The request that made it writes its final state; wait for it to be kept.
  for (let turn = 0; turn < 100 && context.responses.running(id); turn++) await new Promise((resolve) => setImmediate(resolve));
  sendJson(request.response, 200, keptOr404(context, id));
}
