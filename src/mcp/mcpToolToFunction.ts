import { ConfigError, LllmError } from "../errors.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { formatResult } from "../tools/formatResult.js";
import { FunctionTool } from "../tools/FunctionTool.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import { normalizeParameters } from "../tools/normalizeParameters.js";
import { reportResultFiles } from "../tools/resultFiles.js";
import { TOOL_NAME_PATTERN } from "../tools/toolName.js";
import type { McpConnection, McpToolInfo } from "./McpConnection.js";

/** How a server's tool is offered to the model. */
export interface McpToolOptions {
  /** Put before the tool's name in what the model sees; the server still receives its own name. */
  prefix?: string | undefined;
  /** Per-call timeout; a call that takes longer fails with an error naming the server and the tool. */
  callTimeoutMs: number;
  /** The tactic lists the tool in the server's `idempotent_tools` (the server's own hints are not taken for it). */
  idempotent?: boolean;
}

/**
 * A FunctionTool whose `run` calls `tool` on the server and returns the data of the result (see
 * `decodeToolResult`), while the model reads the server's text in the usual result block. The name the model sees is `<prefix><name>`, with any
 * character providers reject (MCP allows dots and slashes) replaced by `_`. The input schema follows lllm's
 * schema rules like every other tool; one point differs: an MCP schema without `required` requires nothing (JSON
 * Schema's meaning), where a hand-written lllm properties map requires every parameter without a default.
 */
export function mcpToolToFunction(connection: McpConnection, tool: McpToolInfo, options: McpToolOptions): FunctionTool {
  const server = connection.name;
  const name = exposedName(`${options.prefix ?? ""}${tool.name}`);
  // The server's name for it, on one line wherever an error quotes it (a line break could forge a line of lllm's own).
  const shownName = escapeControlCharacters(tool.name, { all: true });
  const where = `tool \`${shownName}\` of MCP server \`${server}\``;
  const inputSchema: Record<string, unknown> = isPlainObject(tool.inputSchema) ? tool.inputSchema : { type: "object" };
  let parameters;
  try {
    parameters = normalizeParameters({ ...inputSchema, type: "object", required: Array.isArray(inputSchema.required) ? inputSchema.required : [] }, { where, untypedAsString: false });
  } catch (error) {
    // It quotes the server's property names too: kept on one line like the tool's name.
    const message = escapeControlCharacters(error instanceof LllmError ? error.message : String(error), { all: true });
    throw new ConfigError("mcp_tool_invalid", message, { hint: `Leave \`${shownName}\` out with \`allowed_tools\` on server \`${server}\`, or fix the server's schema.`, cause: error });
  }
  const readOnly = tool.annotations?.readOnlyHint;
  return new FunctionTool({
    name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? "",
    ...parameters,
    run: async (args, context) => {
      const { value, text, files } = await connection.callTool(tool.name, args, { timeoutMs: options.callTimeoutMs, signal: context.signal });
      if (typeof value === "object" && value !== null && text !== "") serverTexts.set(value, text);
      // A program gets the images and resources as the result's `.files`; the model reads their placeholders.
      reportResultFiles(context, files);
      return value;
    },
    // The model reads the server's text; programs get the data (`call.result`).
    processor: (result, call) => formatResult({ ...call, result: (typeof result === "object" && result !== null ? serverTexts.get(result) : undefined) ?? result }),
    // The server's own hint; absent means unknown, which approval treats like any tool without the metadata.
    sideEffects: readOnly === undefined ? undefined : !readOnly,
    // A resume calls it again only when the tactic says it may: a server's hints are its own claims.
    idempotent: options.idempotent === true,
  });
}

/**
 * The server's text of each object result, by the result's identity: `run` returns the data, and the processor
 * that writes the model's text receives only that. Decoded results are fresh objects, so identity is unique.
 */
const serverTexts = new WeakMap<object, string>();

/** A valid provider tool name: invalid characters become `_`, at most 64 characters. */
function exposedName(name: string): string {
  if (TOOL_NAME_PATTERN.test(name)) return name;
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "tool";
}
