import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CreateMessageRequest, ServerNotification, ServerRequest, SamplingMessage } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "../../errors.js";
import { logSeverity } from "../../tools/logSeverity.js";
import { DEFAULT_SAMPLE_MAX_TOKENS, LOG_LEVELS, type ContentBlock, type LogLevel, type SampleRequest, type SampleResult, type ToolContext } from "../../tools/index.js";

/** How long a tool waits for the client to answer a sampling or elicitation request: a person may be answering. */
export const CLIENT_REQUEST_TIMEOUT_MS = 10 * 60 * 1000;

/** What one connection remembers for its tool calls. */
export interface ConnectionState {
  /** The client's `logging/setLevel`; messages below it are not sent. None set: every message is sent. */
  logLevel?: LogLevel;
}

/**
 * The context of a tool called by an MCP client: everything goes to that client, on the call's own stream (so
 * over HTTP it reaches the client on the request's response).
 * - `progress`: `notifications/progress` when the request carried a progress token; a value that does not
 *   increase is dropped (MCP requires increasing values); without a token nothing is sent.
 * - `log`: `notifications/message` (logger: the tool's name) at or above the connection's level.
 * - `sample`: `sampling/createMessage`; `elicit`: `elicitation/create` (form mode). A client without the
 *   capability gets a ToolError the tool may catch.
 */
export function mcpToolContext(options: { server: Server; extra: RequestHandlerExtra<ServerRequest, ServerNotification>; state: ConnectionState; toolName: string; cwd: string }): ToolContext {
  const context = contextFor(options);
  const client = options.server.getClientVersion();
  const userAgent = options.extra.requestInfo?.headers["user-agent"];
  return withCaller(context, {
    tool: options.toolName,
    transport: options.extra.requestInfo !== undefined ? "http" : "stdio",
    ...(client ? { client: `${client.name}${client.version ? `/${client.version}` : ""}` } : {}),
    ...(typeof userAgent === "string" ? { userAgent } : {}),
  });
}

/** Who called a tool over MCP: the tool's name, the transport, the client's `clientInfo` and HTTP User-Agent. */
export interface McpCaller {
  tool: string;
  transport: "stdio" | "http";
  /** `name/version` of the client's `clientInfo`. */
  client?: string;
  userAgent?: string;
}

/** Where a context keeps its caller: a symbol key, which the copies a tool call makes of its context (`{...context}`) keep. */
const MCP_CALLER = Symbol("lllm.mcpCaller");

function withCaller(context: ToolContext, caller: McpCaller): ToolContext {
  return Object.assign(context, { [MCP_CALLER]: caller });
}

/** The MCP caller of a tool call, when `context` is that of a call an MCP client made (`mcpToolContext`). */
export function mcpCallerOf(context: ToolContext | undefined): McpCaller | undefined {
  return (context as Record<symbol, McpCaller | undefined> | undefined)?.[MCP_CALLER];
}

function contextFor(options: { server: Server; extra: RequestHandlerExtra<ServerRequest, ServerNotification>; state: ConnectionState; toolName: string; cwd: string }): ToolContext {
  const { server, extra, state, toolName } = options;
  const token = extra._meta?.progressToken;
  let last: number | undefined;
  const requestOptions = { relatedRequestId: extra.requestId, signal: extra.signal, timeout: CLIENT_REQUEST_TIMEOUT_MS };
  return {
    signal: extra.signal,
    cwd: options.cwd,
    progress: async (done, total, message) => {
      if (token === undefined || !Number.isFinite(done) || (last !== undefined && done <= last)) return;
      last = done;
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) } });
    },
    log: async (level, message) => {
      const severity = logSeverity(level);
      if (state.logLevel !== undefined && severity < LOG_LEVELS.indexOf(state.logLevel)) return;
      await extra.sendNotification({ method: "notifications/message", params: { level, logger: toolName, data: message } });
    },
    sample: async (request) => {
      if (!server.getClientCapabilities()?.sampling) {
        throw new ToolError("tool_sampling_unavailable", `tool ${toolName} asked for a model answer (ctx.sample), but the MCP client does not support sampling`, { hint: "Use a client that offers sampling, or call the tool from an agent of your own." });
      }
      return fromCreateMessageResult(await server.createMessage(toCreateMessageParams(request), requestOptions));
    },
    elicit: async (request) => {
      if (!server.getClientCapabilities()?.elicitation) {
        throw new ToolError("tool_elicitation_unavailable", `tool ${toolName} asked the user a question (ctx.elicit), but the MCP client does not support elicitation`, { hint: "Use a client that offers elicitation, or give the tool what it needs as arguments." });
      }
      const result = await server.elicitInput({ mode: "form", message: request.message, requestedSchema: request.requestedSchema as never }, requestOptions);
      return { action: result.action, ...(result.content !== undefined ? { content: result.content } : {}) };
    },
  };
}

function toCreateMessageParams(request: SampleRequest): CreateMessageRequest["params"] {
  const messages: SamplingMessage[] = (typeof request.messages === "string" ? [{ role: "user" as const, content: request.messages }] : request.messages).map((message) => ({
    role: message.role,
    content: typeof message.content === "string" ? { type: "text", text: message.content } : (message.content as SamplingMessage["content"]),
  }));
  return {
    messages,
    maxTokens: request.maxTokens ?? DEFAULT_SAMPLE_MAX_TOKENS,
    ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.stopSequences !== undefined ? { stopSequences: request.stopSequences } : {}),
    ...(request.modelPreferences !== undefined ? { modelPreferences: request.modelPreferences } : {}),
  };
}

function fromCreateMessageResult(result: { content: unknown; model?: string; stopReason?: string }): SampleResult {
  const content = (Array.isArray(result.content) ? result.content : [result.content]) as ContentBlock[];
  const text = content.filter((block) => block.type === "text").map((block) => (block as { text: string }).text).join("\n");
  return { text, content, ...(result.model !== undefined ? { model: result.model } : {}), ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}) };
}
