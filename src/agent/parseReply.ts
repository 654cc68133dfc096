import { stripFence } from "../util/stripFence.js";
import type { ResponseFormat } from "../providers/Model.js";
import { ParseError, type Prompt } from "../prompts/index.js";

/**
 * What the final reply of a turn parses to: `undefined` when nothing parses it, else `{ parsed }`. The turn
 * prompt's parser wins; without one, a response format means the reply is JSON. A reply that does not parse
 * throws a ParseError, which the loop turns into a retry.
 */
export async function parseReply(content: string, options: { agent: string; prompt: Prompt | undefined; responseFormat: ResponseFormat | undefined }): Promise<{ parsed: unknown } | undefined> {
  const { prompt } = options;
  if (prompt?.parser) return { parsed: await prompt.parser(content, { agent: options.agent, prompt }) };
  if (!options.responseFormat) return undefined;
  try {
    return { parsed: JSON.parse(stripFence(content)) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ParseError(`your reply is not valid JSON (${reason}); reply with the JSON value only`, { cause: error });
  }
}

