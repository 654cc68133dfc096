import type { Message } from "../agent/index.js";
import type { RunRecord } from "./RunRecord.js";

/**
 * The dialog a run ended with, to continue it (`lllm run --continue`): the messages of the last model call of
 * the agent that answered, without the system prompt (the new run's agent brings its own), then that call's
 * reply. Stored text is redacted, so a key the earlier dialog held reads `[redacted]`; a user's images are their
 * notes (`[image: image/png, 1234 bytes]`).
 */
export function dialogOfRun(run: RunRecord): { agent: string; messages: Message[] } | undefined {
  const last = run.model_calls.at(-1);
  if (!last) return undefined;
  const messages: Message[] = [];
  for (const stored of last.messages) {
    const content = stored.content ?? "";
    // The store keeps a note of a user's image, not the image: the note goes in the text, so the model knows.
    if (stored.role === "user") messages.push({ role: "user", content: stored.media && stored.media.length > 0 ? [content, ...stored.media].filter((line) => line !== "").join("\n") : content, name: "user" });
    else if (stored.role === "assistant" && stored.toolCalls && stored.toolCalls.length > 0) messages.push({ role: "tool_call", content, name: last.agent, toolCalls: stored.toolCalls });
    else if (stored.role === "assistant") messages.push({ role: "assistant", content, name: last.agent });
    else if (stored.role === "tool") messages.push({ role: "tool", content, name: stored.name ?? "tool", ...(stored.toolCallId !== undefined ? { toolCallId: stored.toolCallId } : {}) });
  }
  // A run that stopped while tools were asked for has no final answer to continue from.
  if (last.tool_calls.length > 0 || last.reply === null) return undefined;
  messages.push({ role: "assistant", content: last.reply, name: last.agent });
  return { agent: last.agent, messages };
}
