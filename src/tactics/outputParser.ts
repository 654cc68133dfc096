import { stripFence } from "../util/stripFence.js";
import { compileJsonSchema } from "../util/compileJsonSchema.js";
import { ParseError, type PromptParser } from "../prompts/index.js";
import type { ResponseFormat } from "../providers/Model.js";

/**
 * For a tactic with an `output` JSON Schema: ask the model for JSON with that schema, and check the reply. A
 * reply that is not JSON, or does not match, goes back to the model as a ParseError ("Error: …. Please fix.").
 */
export function outputContract(schema: Record<string, unknown>, name: string): { responseFormat: ResponseFormat; parser: PromptParser } {
  const validate = compileJsonSchema(schema);
  const parser: PromptParser = (content) => {
    const text = stripFence(content);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ParseError(`the reply is not valid JSON (${(error as Error).message}); reply with one JSON value that matches the schema`);
    }
    if (!validate(value)) {
      const problems = (validate.errors ?? []).map((item) => `${item.instancePath || "(root)"} ${item.message ?? "is invalid"}`).join("; ");
      throw new ParseError(`the JSON does not match the output schema: ${problems}`);
    }
    return value;
  };
  return { responseFormat: { type: "json_schema", name: safeName(name), schema, strict: false }, parser };
}

/** Response-format names allow letters, digits, `_` and `-`, up to 64 characters. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "output";
}
