import { ConfigError, type SourceLocation } from "../errors.js";
import { templatePlaceholders } from "../prompts/index.js";
import type { PreparedTactic } from "./prepareTactic.js";

/** A `{name}` in one of the tactic's templates that no value will fill. */
export interface MissingVariable {
  name: string;
  /** Which template: `prompt`, `steps[1].prompt`, `the system prompt of agent writer`. */
  what: string;
  where?: SourceLocation;
}

/**
 * The placeholders of the tactic's templates (the turn prompt, pipeline steps, system prompts) that neither the
 * input, the tactic's `vars`, the given `vars` (`--var`) nor an earlier step's `as` will fill. Checked before the
 * first model call, so that a run never stops halfway, after paid calls, for a typo in a template.
 */
export function missingTemplateVariables(prepared: PreparedTactic, vars: Record<string, unknown>): MissingVariable[] {
  const { tactic } = prepared;
  const { config } = tactic;
  const known = new Set(["input", ...Object.keys(config.vars ?? {}), ...Object.keys(vars)]);
  const missing: MissingVariable[] = [];
  // Where a template is, looked up only when one of its placeholders is missing (a batch checks every item).
  const check = (template: string, what: string, locate: () => SourceLocation | undefined, available: Set<string>): void => {
    for (const name of new Set(templatePlaceholders(template))) {
      if (available.has(name)) continue;
      const where = locate();
      missing.push({ name, what, ...(where ? { where } : {}) });
    }
  };
  if (config.tactic_type === "pipeline") {
    const available = new Set(known);
    (config.steps ?? []).forEach((step, index) => {
      check(step.prompt ?? "{input}", `steps[${index}].prompt`, () => tactic.locate(["steps", index, "prompt"]), available);
      if (step.as) available.add(step.as);
    });
  } else if (config.tactic_type === "agent") {
    check(config.prompt, "prompt", () => tactic.locate(["prompt"]), known);
  }
  // The notebook pattern fills its agents' `{api_directory}` itself (Step 16), with or without proxies.
  const systemKnown = config.tactic_type === "notebook" ? new Set([...known, "api_directory"]) : known;
  prepared.agents.forEach((agent, index) => {
    check(agent.systemPrompt.text, `the system prompt of agent \`${agent.name}\``, () => tactic.locateAgent(index, [agent.systemPrompt.ref ? "system_prompt_path" : "system_prompt"]), systemKnown);
  });
  return missing;
}

export interface AssertTemplateVariablesOptions {
  /** How the caller's user gives `name` a value (default: `--var`, the tactic's `vars:`, or literal braces). */
  hint?: (name: string) => string;
}

/** Throw a `template_missing_variable` ConfigError naming every placeholder nothing fills (see missingTemplateVariables). */
export function assertTemplateVariables(prepared: PreparedTactic, vars: Record<string, unknown>, options: AssertTemplateVariablesOptions = {}): void {
  const missing = missingTemplateVariables(prepared, vars);
  if (missing.length === 0) return;
  const hint = options.hint ?? ((name: string): string => `Pass --var ${name}=…, add it to the tactic's \`vars:\`, or write {{${name}}} for literal braces.`);
  // Before any model call: a run must not stop halfway, after paid calls, for a template typo.
  throw ConfigError.fromProblems(
    "template_missing_variable",
    missing.map((item) => ({ message: `{${item.name}} in ${item.what} has no value`, ...(item.where ? { location: item.where } : {}), hint: hint(item.name) })),
  );
}
