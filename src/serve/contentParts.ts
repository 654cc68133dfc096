import type { MediaAttachment } from "../providers/Model.js";
import { isModelImageType } from "../providers/imagesForModel.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { checkFields, required } from "./fields.js";
import { badRequest } from "./HttpError.js";
import type { ServedModel } from "./ServedModels.js";

/** Whether a served tactic takes images: an agent tactic does (its agent's turn), the other patterns take one text. */
export function takesImages(model: ServedModel): boolean {
  return (model.prepared.tactic.config.tactic_type ?? "agent") === "agent";
}

/** Whether a client's label names an image type taken (`image/jpg`, which clients write, is JPEG). */
export function isImageLabel(mimeType: string): boolean {
  const type = mimeType.toLowerCase();
  return isModelImageType(type === "image/jpg" ? "image/jpeg" : type);
}

/** A message's content as a run takes it: its text parts joined, then its images. */
export interface MessageContent {
  text: string;
  media: MediaAttachment[];
}

/** `data:image/png;base64,…`: the only image source taken (see `imageOf`). */
const DATA_URL = /^data:([^;,]{1,100});base64,([A-Za-z0-9+/]+={0,2})$/;

/**
 * A message's content, either API's: a string, or a list of parts. Text parts (`text`, `input_text`, `output_text`)
 * are joined; image parts (chat's `image_url`, the Responses API's `input_image`) are taken where `images` is true (a
 * user's message), as inline `data:` URLs of the types every provider takes. Any other part is a 400 naming it.
 */
export function readContent(content: unknown, where: string, images: boolean): MessageContent {
  if (typeof content === "string") return { text: content, media: [] };
  const texts: string[] = [];
  const media: MediaAttachment[] = [];
  (content as unknown[]).forEach((part, index) => {
    const partWhere = `${where}[${index}]`;
    if (!isPlainObject(part)) throw badRequest(`\`${partWhere}\` must be an object`, partWhere, "invalid_type");
    if (part.type === "text" || part.type === "input_text" || part.type === "output_text") {
      if (typeof part.text !== "string") throw badRequest(`\`${partWhere}.text\` must be a string`, `${partWhere}.text`, "invalid_type");
      texts.push(part.text);
    } else if ((part.type === "image_url" || part.type === "input_image") && images) {
      media.push(imagePart(part, partWhere));
    } else if (part.type === "image_url" || part.type === "input_image") {
      throw badRequest(`\`${partWhere}\` is an image: images are taken in user messages only`, partWhere, "unsupported_content");
    } else {
      throw badRequest(`\`${partWhere}\` is a ${JSON.stringify(part.type)} part: this server takes text parts${images ? " and images" : ""} here`, partWhere, "unsupported_content");
    }
  });
  return { text: texts.join(""), media };
}

/** Chat's `{type: "image_url", image_url: {url, detail}}` or the Responses API's `{type: "input_image", image_url, detail}`. */
function imagePart(part: Record<string, unknown>, where: string): MediaAttachment {
  if (part.type === "image_url") {
    const checked = checkFields(part, { type: ["string"], image_url: ["object"] }, where);
    required(checked, "image_url", where);
    const image = checkFields(checked.image_url, { url: ["string"], detail: ["string"] }, `${where}.image_url`);
    if (typeof image.url !== "string") throw badRequest(`\`${where}.image_url.url\` is required`, `${where}.image_url.url`, "missing_required_parameter");
    return imageOf(image.url, `${where}.image_url.url`);
  }
  const checked = checkFields(part, { type: ["string"], image_url: ["string", "null"], file_id: ["string", "null"], detail: ["string"] }, where);
  if (typeof checked.file_id === "string") throw badRequest(`\`${where}.file_id\`: this server keeps no files; send the image inline as \`image_url\`, a data: URL`, `${where}.file_id`, "unsupported_content");
  if (typeof checked.image_url !== "string") throw badRequest(`\`${where}.image_url\` is required`, `${where}.image_url`, "missing_required_parameter");
  return imageOf(checked.image_url, `${where}.image_url`);
}

/**
 * An image from a `data:` URL. A remote URL is refused rather than fetched: the server would otherwise reach any
 * address a client names, from inside the network it runs in.
 */
function imageOf(url: string, where: string): MediaAttachment {
  const match = DATA_URL.exec(url);
  if (!match) {
    const remote = /^https?:/i.test(url);
    throw badRequest(
      remote
        ? `\`${where}\` is a remote URL: this server fetches no URL a client names; send the image inline, as a data: URL (data:image/png;base64,...)`
        : `\`${where}\` must be a base64 data: URL (data:image/png;base64,...)`,
      where,
      remote ? "unsupported_content" : "invalid_value",
    );
  }
  if (!isImageLabel(match[1]!)) throw badRequest(`\`${where}\` is ${match[1]!}: images are taken as PNG, JPEG, GIF or WebP`, where, "unsupported_content");
  const data = match[2]!;
  if (data.length % 4 !== 0) throw badRequest(`\`${where}\` is not valid base64 (its length is not a multiple of 4)`, where, "invalid_value");
  // The type the bytes say: a provider refuses an image whose declared type is not its own (a 502 for the client's
  // slip), and clients often label every image as JPEG.
  const sniffed = imageTypeOf(Buffer.from(data.slice(0, 16), "base64"));
  if (sniffed === undefined) throw badRequest(`\`${where}\` is not a PNG, JPEG, GIF or WebP image (its first bytes are none of theirs)`, where, "invalid_value");
  return { type: "image", mimeType: sniffed, data };
}

/** The image type a file's first bytes say, of the four taken. */
export function imageTypeOf(head: Uint8Array): string | undefined {
  const text = Buffer.from(head.subarray(0, 12)).toString("latin1");
  if (text.startsWith("\x89PNG")) return "image/png";
  if (text.startsWith("\xff\xd8\xff")) return "image/jpeg";
  if (text.startsWith("GIF8")) return "image/gif";
  if (text.startsWith("RIFF") && text.slice(8, 12) === "WEBP") return "image/webp";
  return undefined;
}
