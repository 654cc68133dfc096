import { ConfigError } from "../errors.js";

/**
 * The `tool_invalid` ConfigError: a tool's definition (its name, schema, or declaration file) is wrong. The
 * message says what is wrong; the hint says how to fix it; `file` points at the declaration when known.
 */
export function toolInvalid(message: string, options: { hint?: string; file?: string | undefined; cause?: unknown } = {}): ConfigError {
  return new ConfigError("tool_invalid", message, {
    ...(options.hint ? { hint: options.hint } : {}),
    ...(options.file ? { location: { file: options.file } } : {}),
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}
