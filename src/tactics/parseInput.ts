import { compileJsonSchema } from "../util/compileJsonSchema.js";
import { ConfigError } from "../errors.js";

/**
 * The run's input, checked against the tactic's `input` schema when there is one. Text is the default; with a
 * schema for anything but a string, the input is read as JSON first.
 */
export function parseInput(schema: unknown, input: unknown): unknown {
  if (schema === undefined || schema === null || typeof schema !== "object") return input;
  const wantsText = (schema as { type?: unknown }).type === "string";
  let value = input;
  if (!wantsText && typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      throw new ConfigError("input_invalid", "the input must be JSON for this tactic (its `input` schema is not a string)", { location: { file: "--input" }, hint: `e.g. --input '{"city": "Paris"}'` });
    }
  }
  const validate = compileJsonSchema(schema as Record<string, unknown>);
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map((item) => `${item.instancePath || "input"} ${item.message ?? "is invalid"}`).join("; ");
    throw new ConfigError("input_invalid", `the input does not match the tactic's input schema: ${problems}`, { location: { file: "--input" } });
  }
  return value;
}
