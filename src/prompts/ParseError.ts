import { ModelBehaviorError } from "../errors.js";

/** A registered symbol, so a ParseError thrown by a parser loaded through another copy of this module is still recognised. */
const PARSE_ERROR_BRAND: unique symbol = Symbol.for("lllm.parseError") as never;

/**
 * Thrown by a prompt's parser when the model's reply does not have the expected shape. The agent does not fail on
 * it: it sends `Error: <message>. Please fix.` back to the model and asks again, up to `maxExceptionRetry` times.
 * Write the message for the model: say what was wrong and what a good reply looks like.
 */
export class ParseError extends ModelBehaviorError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("parse_error", message, options);
  }

  /** Recognised across copies of this module (see PARSE_ERROR_BRAND). */
  get [PARSE_ERROR_BRAND](): true {
    return true;
  }
}

/** A ParseError from this or any other copy of the module. */
export function isParseError(value: unknown): value is ParseError {
  if (value instanceof ParseError) return true;
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[PARSE_ERROR_BRAND] === true;
}
