import type { ConfigProblem } from "../errors.js";
import type { SourceDocument } from "./SourceDocument.js";
import { validateAgainstSchema } from "./validateAgainstSchema.js";

/** Every problem of one tactic file against the tactic schema, on its own (before any `base` merge), by line. */
export function validateTactic(document: SourceDocument): ConfigProblem[] {
  return validateAgainstSchema(document.data, "tactic", document);
}
