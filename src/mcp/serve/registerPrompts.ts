import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { onRequest } from "./onRequest.js";
import { sdkServer } from "./sdkServer.js";
import type { ServedPackage } from "./ServedPackage.js";


/** The most completions sent at once (MCP's limit). */
const MAX_COMPLETIONS = 100;

/**
 * `prompts/list`, `prompts/get`, and `completion/complete` for prompt arguments (their `completions` list, the
 * values that start with what was typed, case aside) and resource template variables (their `complete`).
 */
export function registerPrompts(server: Server, served: ServedPackage): void {
  const { CompleteRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, McpError } = sdkServer();
  if (served.prompts.size > 0) {
    const listed = [...served.prompts.values()].map((prompt) => ({
      name: prompt.name,
      ...(prompt.title !== undefined ? { title: prompt.title } : {}),
      description: prompt.description,
      arguments: prompt.arguments.map((argument) => ({ name: argument.name, ...(argument.description !== undefined ? { description: argument.description } : {}), required: argument.required })),
    }));
    onRequest(server, ListPromptsRequestSchema, () => ({ prompts: listed }));
    onRequest(server, GetPromptRequestSchema, (request) => {
      const prompt = served.prompts.get(request.params.name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}; the prompts are: ${[...served.prompts.keys()].join(", ")}`);
      const args = request.params.arguments ?? {};
      const missing = prompt.arguments.filter((argument) => argument.required && argument.default === undefined && !Object.hasOwn(args, argument.name)).map((argument) => argument.name);
      if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `Prompt ${prompt.name} needs the argument${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
      try {
        return { description: prompt.description, messages: prompt.render(args) };
      } catch (error) {
        throw new McpError(ErrorCode.InvalidParams, `Prompt ${prompt.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }
  onRequest(server, CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    let values: string[];
    if (ref.type === "ref/prompt") {
      const prompt = served.prompts.get(ref.name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
      const typed = argument.value.toLowerCase();
      values = (prompt.arguments.find((item) => item.name === argument.name)?.completions ?? []).filter((value) => value.toLowerCase().startsWith(typed));
    } else {
      const template = served.templates.find((item) => item.uriTemplate === ref.uri);
      if (!template) throw new McpError(ErrorCode.InvalidParams, `Unknown resource template: ${ref.uri}`);
      values = await template.complete(argument.name, argument.value);
    }
    return { completion: { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS } };
  });
}
