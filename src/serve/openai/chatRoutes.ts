import { StreamRedactor } from "../../util/StreamRedactor.js";
import { answerText, unstreamedRest, usageOf } from "../answerText.js";
import { newWireId } from "../newWireId.js";
import type { Protocol, RouteRequest } from "../Route.js";
import { runErrorToHttp, unexpected } from "../runErrorToHttp.js";
import { runRequest, type RunSpec } from "../runRequest.js";
import type { ServeContext } from "../ServeContext.js";
import { sendJson } from "../sendJson.js";
import { chatCompletion, ChatStream, type ChatHead } from "./chatOutput.js";
import { parseChatRequest } from "./parseChatRequest.js";

/** OpenAI's Chat Completions: `POST /v1/chat/completions`, each served tactic a model. */
export const chatProtocol: Protocol = () => [{ method: "POST", path: "/v1/chat/completions", handle: chatCompletions }];

async function chatCompletions(request: RouteRequest, context: ServeContext): Promise<void> {
  const parsed = parseChatRequest(await request.body(), context.models);
  request.setModel(parsed.model.id);
  const head: ChatHead = { id: newWireId("chatcmpl-"), created: Math.floor(Date.now() / 1000), model: parsed.model.id };
  const spec: RunSpec = { ...parsed, route: "chat.completions", responseId: head.id };
  if (!parsed.stream) {
    const { run, outcome } = await runRequest(request, context, spec);
    if (outcome.type === "paused") return sendJson(request.response, 200, chatCompletion(head, { text: outcome.text, calls: outcome.calls }, usageOf(run)));
    if (outcome.type !== "finished") throw unexpected(outcome.type);
    if (!outcome.run.ok) throw runErrorToHttp(outcome.run.error, { partialOutput: run.lastText, requestId: head.id, log: context.warn });
    return sendJson(request.response, 200, chatCompletion(head, { text: answerText(outcome.run) }, usageOf(run)));
  }
  const stream = new ChatStream(request.response, head, parsed.includeUsage);
  // A key a tool echoed and the model repeated is redacted in the stream too, even split across deltas; what the
  // redactor holds back (a possible start of a key) goes as soon as the reply it is part of is whole.
  const redactor = new StreamRedactor();
  const { run, outcome } = await runRequest(request, context, spec, { listener: { text: (delta) => stream.content(redactor.push(delta)), event: (event) => event.type === "model_reply" && stream.content(redactor.flush()) }, onAdmitted: () => stream.open() });
  stream.content(redactor.flush());
  if (outcome.type === "paused") {
    // The round's text, when the run was not streaming it (it began with a request that did not stream).
    if (run.streamedSinceCall === "") stream.content(outcome.text);
    return stream.finish(outcome.calls, usageOf(run));
  }
  if (outcome.type !== "finished") return stream.fail(unexpected(outcome.type));
  if (!outcome.run.ok) return stream.fail(runErrorToHttp(outcome.run.error, { partialOutput: run.lastText, requestId: head.id, log: context.warn }));
  stream.content(unstreamedRest(outcome.run, run));
  stream.finish([], usageOf(run));
}
