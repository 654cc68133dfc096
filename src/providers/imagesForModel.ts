import type { MediaAttachment, ModelMessage } from "./Model.js";

/** The image types every provider lllm speaks to takes (OpenAI, Anthropic, Gemini): others stay text only. */
export const MODEL_IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const IMAGE_TYPES = new Set(MODEL_IMAGE_TYPES);

/** Whether a model of any provider lllm speaks to takes an image of this MIME type. */
export function isModelImageType(mimeType: string): boolean {
  return IMAGE_TYPES.has(mimeType.toLowerCase());
}

/**
 * The images of a tool or user message a model can be sent; a tool's audio and other image types are only noted in
 * its text.
 */
export function imagesForModel(message: ModelMessage): MediaAttachment[] {
  if ((message.role !== "tool" && message.role !== "user") || !message.media) return [];
  return message.media.filter((item) => item.type === "image" && IMAGE_TYPES.has(item.mimeType.toLowerCase()));
}

/** An image as a `data:` URL (OpenAI's form). */
export function dataUrl(image: MediaAttachment): string {
  return `data:${image.mimeType};base64,${image.data}`;
}

/** The text that introduces images sent after a round's results, naming the call they came from. */
export function imagesCaption(message: ModelMessage & { role: "tool" }, count: number): string {
  return `${count === 1 ? "The image" : `The ${count} images`} returned by ${message.name ?? "the tool"} (call ${message.toolCallId}):`;
}
