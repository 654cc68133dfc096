import { randomUUID } from "node:crypto";
import type { Message, Part, Task } from "@a2a-js/sdk";
import type { MediaAttachment } from "../../providers/Model.js";
import { imageTypeOf, isImageLabel, takesImages } from "../contentParts.js";
import type { ServedModel } from "../ServedModels.js";

/** `Role.ROLE_AGENT` (the SDK's enum, as a value: this file loads nothing of the SDK). */
const ROLE_AGENT = 2;

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

/** A JSON part (a structured answer). */
export function dataPart(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

/** The agent's message of a task: a status's text, with optional metadata (a tool call's name and arguments). */
export function statusMessage(task: { id: string; contextId: string }, text: string, metadata?: Record<string, unknown>): Message {
  return { messageId: randomUUID(), contextId: task.contextId, taskId: task.id, role: ROLE_AGENT, parts: [textPart(text)], metadata: metadata ?? {}, extensions: [], referenceTaskIds: [] };
}

/**
 * A message's content as a run's input: its text parts joined, or the value of its one data part (JSON), or, when
 * it mixes them, all of it as text; and its images (raw file parts of the types every provider takes), which only
 * an agent tactic takes. Other files, and files by URL, are refused with the reason.
 */
export function messageInput(message: Message, model: ServedModel): { input: string; media?: MediaAttachment[] } | { refused: string } {
  const texts: string[] = [];
  const data: unknown[] = [];
  const media: MediaAttachment[] = [];
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === "text") texts.push(content.value);
    else if (content?.$case === "data") data.push(content.value);
    // The SDK's 0.3 layer passes a file's `mimeType` on as the client sent it, a number included.
    else if (content?.$case === "raw" && typeof part.mediaType === "string" && isImageLabel(part.mediaType)) {
      if (!takesImages(model)) return { refused: `skill \`${model.id}\` takes text only: images go to agent tactics, whose agent's model sees them` };
      // The type the bytes say (see imageTypeOf): a provider refuses an image labelled with another.
      const mimeType = imageTypeOf(content.value);
      if (mimeType === undefined) return { refused: `the message's ${part.mediaType} part is not a PNG, JPEG, GIF or WebP image (its first bytes are none of theirs)` };
      media.push({ type: "image", mimeType, data: Buffer.from(content.value).toString("base64") });
    } else if (content?.$case === "url") {
      // Fetched by no one: the server would otherwise reach any address a client names, from inside its network.
      return { refused: "the message has a file part by URL: this agent fetches no URL a client names; send the file's bytes (a raw part)" };
    } else if (content?.$case === "raw") {
      return { refused: `the message has a file part of type ${JSON.stringify(part.mediaType)}: this agent takes text, data, and PNG, JPEG, GIF or WebP images` };
    } else return { refused: "the message has an empty part: send text, data or image parts" };
  }
  const withMedia = media.length > 0 ? { media } : {};
  if (texts.length === 0 && data.length === 1) return { input: typeof data[0] === "string" ? data[0] : JSON.stringify(data[0]), ...withMedia };
  const input = [...texts, ...data.map((value) => JSON.stringify(value))].join("\n");
  if (input.trim() === "" && media.length === 0) return { refused: "the message is empty: send the task's input as a text part" };
  return { input, ...withMedia };
}

/** A task's text, for the model's conversation: its text parts joined. */
export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : part.content?.$case === "data" ? JSON.stringify(part.content.value) : "")).join("");
}

/** A new task in `submitted` state, with the user's message as its history. */
export function submittedTask(ids: { taskId: string; contextId: string }, userMessage: Message): Task {
  return { id: ids.taskId, contextId: ids.contextId, status: { state: 1, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [userMessage], metadata: {} };
}
