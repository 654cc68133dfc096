import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { DEFAULT_SAMPLE_MAX_TOKENS } from "../tools/ToolContext.js";
import type { McpClientHooks } from "./McpClientHooks.js";

/** Sampling requests answered per server and run when the config does not say. */
export const DEFAULT_SAMPLING_MAX_REQUESTS = 10;

/**
 * The client side of what servers may ask: questions for the user (elicitation: the hook, or declined; URL mode
 * is refused), the model (sampling: the hook within the config's budget, or refused with an error the server can
 * read), the roots lllm offers, and log messages (to the hook).
 */
export function installClientHandlers(client: Client, options: { config: McpServerConfig; hooks: McpClientHooks }): void {
  const { config, hooks } = options;
  const server = config.name;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params;
    if (params.mode === "url") throw new McpError(ErrorCode.InvalidParams, "lllm does not open URLs for servers (URL-mode elicitation)");
    if (!hooks.elicit || config.elicitation === "decline") return { action: "decline" };
    return hooks.elicit({ server, message: params.message, schema: params.requestedSchema });
  });

  let samplingLeft = config.sampling?.max_requests ?? DEFAULT_SAMPLING_MAX_REQUESTS;
  const maxTokens = config.sampling?.max_tokens ?? DEFAULT_SAMPLE_MAX_TOKENS;
  const sample = hooks.sample;
  // Without a model (or with max_requests: 0) the capability is not declared, and the SDK refuses for lllm.
  if (sample && samplingLeft > 0) client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    if (samplingLeft <= 0) throw new McpError(ErrorCode.InvalidRequest, `sampling refused: this run answers at most ${config.sampling?.max_requests ?? DEFAULT_SAMPLING_MAX_REQUESTS} sampling requests of server \`${server}\` (mcp_servers[].sampling.max_requests)`);
    samplingLeft--;
    return sample({ ...request.params, maxTokens: Math.min(request.params.maxTokens, maxTokens) }, server);
  });

  // Only with roots to offer: the capability is declared then alone (the SDK refuses a handler without it).
  const roots = hooks.roots ?? [];
  if (roots.length > 0) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));

  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    hooks.onLog?.({ server, level: notification.params.level, logger: notification.params.logger, data: notification.params.data });
  });
}
