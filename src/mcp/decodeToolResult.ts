import type { ContentBlock } from "../tools/ContentBlock.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import { fileBlocksOf } from "../tools/resultFiles.js";
import { nestedDeeperThan } from "../util/nestedDeeperThan.js";
import { MAX_MESSAGE_DEPTH } from "./DepthGuardTransport.js";
import { jsonRpcCodeName } from "./jsonRpcCodeName.js";
import { McpToolError } from "./McpToolError.js";

/** The part of an MCP `tools/call` result this module reads (the SDK's `CallToolResult`, loosely typed). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The pre-2025 compatibility form some servers still send. */
  toolResult?: unknown;
}

/** A tool call's outcome: the data for programs, and the server's text for the model. */
export interface DecodedToolResult {
  /** `run`'s result: `structuredContent`, else the text decoded from JSON, else the text. */
  value: unknown;
  /** The text content as the server wrote it (non-text blocks as placeholders). */
  text: string;
  /** The non-text blocks (images, audio, resources, resource links), for programs' `.files` (seed 001). */
  files: ContentBlock[];
}

/**
 * What an MCP tool call returns to lllm:
 * - as data (`value`): `structuredContent` when the server sent it; otherwise the text content, joined with
 *   newlines, decoded when it is valid JSON: servers send lists and objects as JSON text, and code-action
 *   programs should get the data (seed 002). Other text stays a string.
 * - as text (`text`), what the model should read: the server wrote it for a model (a file's content reads
 *   better as itself than as an escaped JSON string inside `structuredContent`).
 * Images, audio and resources are not useful to a text model as base64, so they become a short placeholder in the
 * text; `files` keeps them, for a program (seed 001's `.files`).
 * An error result (`isError: true`, or a `{"error": {"code", "message"}}` envelope) throws `McpToolError`.
 */
export function decodeToolResult(result: McpCallResult, where: { server: string; tool: string }): DecodedToolResult {
  if (result.toolResult !== undefined && result.content === undefined) return { value: result.toolResult, text: "", files: [] };
  const text = contentText(result.content);
  if (result.isError === true) {
    // Servers that follow lllm's convention (`lllm mcp serve`) start the text with "Error: "; the loop adds it.
    const message = text.replace(/^Error: /, "");
    const prefixed = /^MCP error (-?\d+): ([\s\S]*)$/.exec(message);
    const envelope = errorEnvelope(parseJson(message));
    if (envelope) throw new McpToolError(`${envelope.code}: ${envelope.message}`, { ...where, mcpCode: envelope.code, mcpMessage: envelope.message });
    const mcpCode = prefixed ? jsonRpcCodeName(prefixed[1]!) : "TOOL_ERROR";
    const mcpMessage = prefixed ? prefixed[2]! : message || `tool \`${where.tool}\` of MCP server \`${where.server}\` failed without a message`;
    throw new McpToolError(message || mcpMessage, { ...where, mcpCode, mcpMessage });
  }
  const files = fileBlocksOf(result.content);
  if (result.structuredContent !== undefined && result.structuredContent !== null) return { value: result.structuredContent, text, files };
  const decoded = parseJson(text);
  if (decoded === undefined) return { value: text, text, files };
  const envelope = errorEnvelope(decoded);
  if (envelope) throw new McpToolError(`${envelope.code}: ${envelope.message}`, { ...where, mcpCode: envelope.code, mcpMessage: envelope.message });
  return { value: decoded.value, text, files };
}

/** The content blocks as text: text blocks as they are, other blocks as a one-line placeholder. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content.map(blockText).join("\n");
}

function blockText(block: unknown): string {
  if (!isPlainObject(block)) return "";
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return `[${String(block.type)} ${String(block.mimeType ?? "")}, ${typeof block.data === "string" ? Math.floor((block.data.length * 3) / 4) : 0} bytes]`;
    case "resource": {
      const resource = isPlainObject(block.resource) ? block.resource : {};
      return typeof resource.text === "string" ? resource.text : `[resource ${String(resource.uri ?? "")}]`;
    }
    case "resource_link":
      return `[resource link ${String(block.uri ?? "")}${typeof block.name === "string" ? ` (${block.name})` : ""}]`;
    default:
      return `[${String(block.type)} content]`;
  }
}

/**
 * `{value}` when the text is JSON, `undefined` when it is not (a JSON `null` is still a value). JSON nested deeper
 * than a message may be (`[[[[…`) stays text: as data it would overflow the stack of what walks a result.
 */
function parseJson(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
  return nestedDeeperThan(value, MAX_MESSAGE_DEPTH) ? undefined : { value };
}

/** A Promptise-style `{"error": {"code": …, "message": …}}` envelope, the only key of the result. */
function errorEnvelope(decoded: { value: unknown } | undefined): { code: string; message: string } | undefined {
  const value = decoded?.value;
  if (!isPlainObject(value) || Object.keys(value).length !== 1 || !isPlainObject(value.error)) return undefined;
  const { code, message } = value.error;
  if (typeof message !== "string") return undefined;
  return { code: typeof code === "string" || typeof code === "number" ? String(code) : "TOOL_ERROR", message };
}
