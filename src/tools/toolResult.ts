import { blockText, toContentBlock, type ContentBlock, type ContentBlockInput, type ImageBlock, type AudioBlock } from "./ContentBlock.js";
import { isPlainObject, kindOf } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

/**
 * The brand of a rich result. A registered symbol, so that a result made by another copy of this module (a tool
 * file loaded through a transpiler has its own) is recognised too.
 */
export const TOOL_RESULT_BRAND: unique symbol = Symbol.for("lllm.toolResult") as never;

/** What `toolResult()` takes. */
export interface ToolResultSpec {
  /** The blocks of the result, in order: text, images, audio, embedded resources, resource links. */
  content?: ContentBlockInput[];
  /** The result as data (a JSON object), for readers that use data; checked against the tool's `outputSchema`. */
  structuredContent?: Record<string, unknown>;
  /** The call failed: the text of `content` is the error the reader gets. Throwing does the same. */
  isError?: boolean;
}

/** A rich tool result (see `toolResult`): MCP's `CallToolResult` shape, checked. */
export interface ToolResult {
  readonly content: ContentBlock[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly [TOOL_RESULT_BRAND]: true;
}

/**
 * A rich result for a tool to return: content blocks (text, images, audio, resources) and, optionally, the same
 * result as data. An MCP client receives it as it is; inside lllm the model reads the text (seed 000's result
 * block, each non-text block noted in brackets) and a model that takes images gets the images too.
 *
 * ```ts
 * return toolResult({ content: [{ type: "text", text: "The chart:" }, { type: "image", data: png, mimeType: "image/png" }] });
 * ```
 * Throws a `tool_invalid` ConfigError naming the block that is wrong.
 */
export function toolResult(spec: ToolResultSpec): ToolResult {
  if (!isPlainObject(spec)) throw toolInvalid(`toolResult() needs {content, structuredContent?, isError?}, got ${kindOf(spec)}`);
  const given = spec.content ?? [];
  if (!Array.isArray(given)) throw toolInvalid(`toolResult(): \`content\` must be a list of blocks, got ${kindOf(given)}`);
  let content: ContentBlock[];
  try {
    content = given.map((block, index) => toContentBlock(block, `content[${index}]`));
  } catch (error) {
    throw toolInvalid(`toolResult(): ${(error as Error).message}`, { hint: 'A block is {type: "text", text}, {type: "image" | "audio", data, mimeType}, {type: "resource", resource: {uri, text | blob}} or {type: "resource_link", uri, name}.' });
  }
  if (spec.structuredContent !== undefined && !isPlainObject(spec.structuredContent)) {
    throw toolInvalid(`toolResult(): \`structuredContent\` must be a JSON object, got ${kindOf(spec.structuredContent)}`);
  }
  if (spec.isError !== undefined && typeof spec.isError !== "boolean") throw toolInvalid(`toolResult(): \`isError\` must be true or false, got ${kindOf(spec.isError)}`);
  // With data only, the text is the data as JSON: MCP asks for both, for clients that read only the text.
  if (content.length === 0 && spec.structuredContent !== undefined) content = [{ type: "text", text: JSON.stringify(spec.structuredContent) }];
  return Object.freeze({
    content,
    ...(spec.structuredContent !== undefined ? { structuredContent: spec.structuredContent } : {}),
    ...(spec.isError ? { isError: true } : {}),
    [TOOL_RESULT_BRAND]: true as const,
  });
}

/** The value as a ToolResult when it is one (of any copy of this module). */
export function asToolResult(value: unknown): ToolResult | undefined {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TOOL_RESULT_BRAND] === true ? (value as ToolResult) : undefined;
}

/** The text a reader of text gets from a rich result: each block's text (see `blockText`), one after another. */
export function toolResultText(result: ToolResult): string {
  return result.content.map(blockText).join("\n");
}

/** The images and audio of a rich result, for a model that takes them. */
export function toolResultMedia(value: unknown): Array<ImageBlock | AudioBlock> {
  const result = asToolResult(value);
  if (!result || result.isError) return [];
  return result.content.filter((block): block is ImageBlock | AudioBlock => block.type === "image" || block.type === "audio");
}
