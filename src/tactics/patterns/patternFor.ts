import type { BuiltInTacticType } from "../../config/index.js";
import { ConfigError } from "../../errors.js";
import { looksLikeQualifiedRef } from "../../config/ref.js";
import type { PreparedTactic } from "../prepareTactic.js";
import { agentPattern } from "./agent.js";
import { codeActionPattern } from "./codeAction.js";
import { codeTacticPattern } from "./codeTactic.js";
import { notebookPattern } from "./notebook.js";
import type { Pattern } from "./Pattern.js";
import { pipelinePattern } from "./pipeline.js";

/** The built-in patterns by `tactic_type`. */
export const PATTERNS: Readonly<Record<BuiltInTacticType, Pattern>> = {
  agent: agentPattern,
  pipeline: pipelinePattern,
  "code-action": codeActionPattern,
  notebook: notebookPattern,
};

/** The pattern of a prepared tactic: a built-in one, or a tactic written in code named by ref. */
export function patternFor(prepared: PreparedTactic): Pattern {
  const type = prepared.tactic.config.tactic_type;
  if (Object.hasOwn(PATTERNS, type)) return PATTERNS[type as BuiltInTacticType];
  if (looksLikeQualifiedRef(type)) return codeTacticPattern;
  // prepareTactic reports an unknown type with its line; this is for a PreparedTactic built by hand.
  throw new ConfigError("tactic_type_unsupported", `tactic_type \`${type}\` cannot run yet`, {
    location: prepared.tactic.locate(["tactic_type"]) ?? { file: prepared.tactic.file },
    hint: "The built-in patterns are `agent`, `pipeline`, `code-action` and `notebook`; a package tactic is named by ref (`pkg.tactics:name`).",
  });
}
