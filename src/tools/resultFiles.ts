import { toContentBlock, type ContentBlock } from "./ContentBlock.js";
import type { ToolContext } from "./ToolContext.js";
import type { ToolResult } from "./toolResult.js";

/**
 * Where a tool whose `run` returns data can hand over the files of its result: an MCP tool returns the decoded
 * value (what programs compute with) and the model reads the server's text, so the images, audio and resources of
 * the server's result would be lost to a program. Code-action's bridge puts a sink under this symbol in the
 * context and gives the files to the program as the result's `.files` (seed 001); the agent loop puts none. A
 * registered symbol, so that a copy of this module (a transpiled tool file has its own) finds the same sink; a
 * symbol key survives the copies FunctionTool makes of the context.
 */
export const RESULT_FILES: unique symbol = Symbol.for("lllm.resultFiles") as never;

/** What the caller puts under `RESULT_FILES`. */
export type ResultFilesSink = (files: readonly ContentBlock[]) => void;

/** Give `files` to the caller that keeps them, if any (see `RESULT_FILES`). */
export function reportResultFiles(context: ToolContext, files: readonly ContentBlock[]): void {
  const sink = (context as Record<symbol, unknown>)[RESULT_FILES];
  if (typeof sink === "function" && files.length > 0) (sink as ResultFilesSink)(files);
}

/** The blocks of a result that are not text (images, audio, embedded resources, resource links), in order. */
export function fileBlocks(result: ToolResult): ContentBlock[] {
  return result.content.filter((block) => block.type !== "text");
}

/**
 * The non-text blocks of content an MCP server sent, checked (`toContentBlock`); a block lllm does not know or
 * that is malformed is left out: its placeholder in the text is all there is of it.
 */
export function fileBlocksOf(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((block, index) => {
    if (typeof block !== "object" || block === null || (block as { type?: unknown }).type === "text") return [];
    try {
      return [toContentBlock(block, `content[${index}]`)];
    } catch {
      return [];
    }
  });
}
