import type { ChatCompletionContentPart, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { dataUrl, imagesCaption, imagesForModel } from "./imagesForModel.js";
import type { ModelMessage } from "./Model.js";

const wireForms = new WeakMap<ModelMessage, { content: string | null; toolCalls: unknown; toolCallId: unknown; media: unknown; form: ChatCompletionMessageParam }>();

/**
 * Our messages in the chat-completions wire format (snake_case `tool_calls` / `tool_call_id`). Each message is
 * converted once (a dialog is sent again every round, as the same objects: see `modelMessageOf`); one changed in
 * place since is converted again. The result is only serialised, never changed, so it may be shared.
 */
export function toChatCompletionMessages(messages: ModelMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  // A tool message takes text only, and the results of a round must follow their calls without a break: the
  // images of a round go in one user message after its last result.
  let images: ChatCompletionContentPart[] | undefined;
  // Run over the whole dialog at every round, so V8 optimises it on a long run: kept small (the rare image path in a
  // function of its own, no array made per message), a 100-round run takes 16 million fewer instructions (3%), 10 of
  // them in V8's optimising compiler.
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (images !== undefined && message.role !== "tool") {
      out.push(imageMessage(images));
      images = undefined;
    }
    out.push(wireForm(message));
    if (message.role === "tool" && message.media !== undefined) images = withImages(images, message);
  }
  if (images !== undefined) out.push(imageMessage(images));
  return out;
}

/** The images of a round so far, with those of this tool result (a caption naming its call, then each image). */
function withImages(images: ChatCompletionContentPart[] | undefined, message: ModelMessage & { role: "tool" }): ChatCompletionContentPart[] | undefined {
  const attached = imagesForModel(message);
  if (attached.length === 0) return images;
  return [...(images ?? []), { type: "text", text: imagesCaption(message, attached.length) }, ...attached.map((image) => ({ type: "image_url" as const, image_url: { url: dataUrl(image) } }))];
}

function wireForm(message: ModelMessage): ChatCompletionMessageParam {
  const known = wireForms.get(message);
  const toolCalls = message.role === "assistant" ? message.toolCalls : undefined;
  const toolCallId = message.role === "tool" ? message.toolCallId : undefined;
  const media = message.role === "user" ? message.media : undefined;
  if (known && known.content === message.content && known.toolCalls === toolCalls && known.toolCallId === toolCallId && known.media === media) return known.form;
  const form = toWireMessage(message);
  wireForms.set(message, { content: message.content, toolCalls, toolCallId, media, form });
  return form;
}

/** The images of a round's results as one user message, each call's under the caption that names it. */
function imageMessage(parts: ChatCompletionContentPart[]): ChatCompletionMessageParam {
  return { role: "user", content: parts };
}

function toWireMessage(message: ModelMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user": {
      // A user's images follow the text, as content parts.
      const images = imagesForModel(message);
      if (images.length === 0) return { role: "user", content: message.content };
      return { role: "user", content: [...(message.content !== "" ? [{ type: "text" as const, text: message.content }] : []), ...images.map((image) => ({ type: "image_url" as const, image_url: { url: dataUrl(image) } }))] };
    }
    case "assistant":
      // An empty `tool_calls` list is rejected by OpenAI ("[] is too short"), so it is left out.
      return message.toolCalls && message.toolCalls.length > 0
        ? {
            role: "assistant",
            content: message.content,
            tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
          }
        : { role: "assistant", content: message.content ?? "" };
    case "tool":
      // `name` is not part of the current tool message and some servers reject unknown fields, so it is dropped.
      return { role: "tool", content: message.content, tool_call_id: message.toolCallId };
  }
}

/** Each wire message's JSON text, made once: the wire forms are never changed (see above). */
const jsonTexts = new WeakMap<ChatCompletionMessageParam, string>();

/**
 * A chat completions body as JSON text, its messages last. A dialog's earlier messages are serialised once, not at
 * every round: a long tool loop would otherwise serialise its whole dialog again for each request.
 */
export function chatBodyText(body: { messages: ChatCompletionMessageParam[] } & Record<string, unknown>): string {
  const { messages, ...rest } = body;
  const texts = messages.map((message) => {
    let text = jsonTexts.get(message);
    if (text === undefined) jsonTexts.set(message, (text = JSON.stringify(message)));
    return text;
  });
  const head = JSON.stringify(rest);
  const list = `"messages":[${texts.join(",")}]`;
  return head === "{}" ? `{${list}}` : `${head.slice(0, -1)},${list}}`;
}
