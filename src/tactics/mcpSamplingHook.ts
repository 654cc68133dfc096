import type { CreateMessageRequest, CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import type { AgentEvent } from "../agent/AgentEvent.js";
import { sampleWithModel } from "../agent/sampleWithModel.js";
import type { Model } from "../providers/Model.js";

/**
 * The hook that answers an MCP server's `sampling/createMessage` with `model` (the agent's own), through the same
 * `sampleWithModel` as a tool's `ctx.sample`: each request is a model call of `agent` (a round of its own), so the
 * run counts, records and prices it. The chat format carries text, so an image or audio block goes as a short
 * placeholder; `maxTokens` comes already capped by the config; the answer goes back as one text block.
 */
export function mcpSamplingHook(model: Model, options: { agent: string; signal?: AbortSignal | undefined; onEvent?: ((event: AgentEvent) => void) | undefined }): (request: CreateMessageRequest["params"]) => Promise<CreateMessageResult> {
  let round = 0;
  return async (request) => {
    const messages = request.messages.map((message) => {
      const blocks = Array.isArray(message.content) ? message.content : [message.content];
      return { role: message.role, content: blocks.map((block) => (block.type === "text" ? block.text : `[${block.type} content]`)).join("\n") };
    });
    const result = await sampleWithModel(
      {
        messages,
        maxTokens: request.maxTokens,
        ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.stopSequences !== undefined ? { stopSequences: request.stopSequences } : {}),
      },
      { model, agent: options.agent, round: round++, signal: options.signal, onEvent: options.onEvent },
    );
    return { role: "assistant", content: { type: "text", text: result.text }, model: model.name, stopReason: result.stopReason === "maxTokens" ? "maxTokens" : "endTurn" };
  };
}
