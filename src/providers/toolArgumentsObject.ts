/**
 * A tool call's arguments (raw JSON text from the model) as the object APIs that take them parsed want
 * (Anthropic's `tool_use.input`, Gemini's `functionCall.args`). Arguments the model sent as bad JSON, or as a
 * value that is not an object, were already answered with an error: they go back as `{}`.
 */
export function toolArgumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
