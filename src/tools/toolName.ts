import { toolInvalid } from "./toolInvalid.js";

/** What providers accept as a function name (OpenAI's rule): letters, digits, `_` and `-`, 1 to 64 of them. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Check a tool name and return it; throws a `tool_invalid` ConfigError that suggests a valid spelling.
 * `file` is where the tool was defined, for the error's location.
 */
export function checkToolName(name: unknown, file?: string): string {
  if (typeof name !== "string" || name === "") {
    throw toolInvalid(`a tool needs a \`name\`${name === undefined || name === "" ? "" : ` (a string), got ${JSON.stringify(name) ?? String(name)}`}`, {
      hint: 'Give it a name of letters, digits, _ or - (at most 64 characters), e.g. name: "get_weather".',
      file,
    });
  }
  if (!TOOL_NAME_PATTERN.test(name)) {
    const suggestion = name.replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 64) || "my_tool";
    throw toolInvalid(`tool name \`${name}\` is not valid: names must match ${TOOL_NAME_PATTERN.source} (letters, digits, _ and -, at most 64 characters)`, {
      hint: `Rename it, e.g. \`${suggestion}\`.`,
      file,
    });
  }
  return name;
}
