import { isPlainObject, kindOf } from "./JsonSchema.js";

/** Text for the reader. */
export interface TextBlock {
  type: "text";
  text: string;
}

/** An image: base64 data and its MIME type (`image/png`, `image/jpeg`, …). */
export interface ImageBlock {
  type: "image";
  /** Base64 (a `Uint8Array` given to `toolResult()` is encoded). */
  data: string;
  mimeType: string;
}

/** Audio: base64 data and its MIME type (`audio/wav`, `audio/mpeg`, …). */
export interface AudioBlock {
  type: "audio";
  data: string;
  mimeType: string;
}

/** The contents of a resource: text, or base64 bytes (`blob`). */
export type ResourceContents = { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string };

/** A resource embedded in the result, contents and all. */
export interface EmbeddedResourceBlock {
  type: "resource";
  resource: ResourceContents;
}

/** A pointer to a resource the reader may fetch (MCP's `resource_link`). */
export interface ResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/**
 * One block of a rich tool result, in MCP's shapes (so that a result reaches an MCP client unchanged): text, an
 * image, audio, an embedded resource, or a link to a resource.
 */
export type ContentBlock = TextBlock | ImageBlock | AudioBlock | EmbeddedResourceBlock | ResourceLinkBlock;

/** What `toolResult()` accepts for a block: binary data may be bytes rather than base64. */
export type ContentBlockInput =
  | TextBlock
  | (Omit<ImageBlock, "data"> & { data: string | Uint8Array })
  | (Omit<AudioBlock, "data"> & { data: string | Uint8Array })
  | { type: "resource"; resource: { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string | Uint8Array } }
  | ResourceLinkBlock;

/**
 * Check one block and return it in wire form (bytes as base64, only the known fields). Throws an Error that says
 * which field is wrong; `where` names the block (`content[2]`).
 */
export function toContentBlock(value: unknown, where: string): ContentBlock {
  if (!isPlainObject(value)) throw new Error(`${where} must be an object like {type: "text", text: "…"}, got ${kindOf(value)}`);
  const text = (key: string, from: Record<string, unknown> = value, at = where): string => {
    const field = from[key];
    if (typeof field !== "string") throw new Error(`${at}.${key} must be a string, got ${kindOf(field)}`);
    return field;
  };
  const optional = (key: string, from: Record<string, unknown> = value, at = where): Record<string, string> => (from[key] === undefined ? {} : { [key]: text(key, from, at) });
  switch (value.type) {
    case "text":
      return { type: "text", text: text("text") };
    case "image":
    case "audio":
      return { type: value.type, data: base64(value.data, `${where}.data`), mimeType: text("mimeType") };
    case "resource": {
      const resource = value.resource;
      const at = `${where}.resource`;
      if (!isPlainObject(resource)) throw new Error(`${at} must be an object {uri, mimeType?, text | blob}, got ${kindOf(resource)}`);
      const head = { uri: text("uri", resource, at), ...optional("mimeType", resource, at) };
      if (typeof resource.text === "string") return { type: "resource", resource: { ...head, text: resource.text } };
      if (resource.blob !== undefined) return { type: "resource", resource: { ...head, blob: base64(resource.blob, `${at}.blob`) } };
      throw new Error(`${at} needs \`text\` (a string) or \`blob\` (base64 or bytes)`);
    }
    case "resource_link":
      return { type: "resource_link", uri: text("uri"), name: text("name"), ...optional("title"), ...optional("description"), ...optional("mimeType") };
    default:
      throw new Error(`${where}.type must be one of "text", "image", "audio", "resource", "resource_link", got ${JSON.stringify(value.type) ?? kindOf(value.type)}`);
  }
}

function base64(value: unknown, where: string): string {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
  if (typeof value === "string") return value;
  throw new Error(`${where} must be base64 text or bytes (a Uint8Array), got ${kindOf(value)}`);
}

/** The size in bytes of base64 data, for descriptions ("68 bytes"). */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.replace(/\s/g, "").length * 3) / 4) - padding);
}

/**
 * A block as a line of text for a reader that only reads text (the model's result text, a terminal): text as it
 * is, a text resource as its text under a header, anything else as a bracketed note of what it is.
 */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource": {
      const { resource } = block;
      const what = `[resource: ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}`;
      return "text" in resource ? `${what}]\n${resource.text}` : `${what}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case "resource_link":
      return `[resource link: ${block.name} <${block.uri}>${block.description ? ` ${block.description}` : ""}]`;
  }
}
