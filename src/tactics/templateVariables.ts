import { ConfigError, type SourceLocation } from "../errors.js";
import { templatePlaceholders } from "../prompts/index.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { didYouMean } from "../util/closest.js";

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
  const known = new Set(["input", ...Object.keys(prepared.tactic.config.vars ?? {}), ...Object.keys(vars)]);
  const missing: MissingVariable[] = [];
  // Where a template is, looked up only when one of its placeholders is missing (a batch checks every item).
  eachTemplate(prepared, known, (template, what, locate, available) => {
    for (const name of new Set(templatePlaceholders(template))) {
      if (available.has(name)) continue;
      const where = locate();
      missing.push({ name, what, ...(where ? { where } : {}) });
    }
  });
  return missing;
}

/**
 * The `--var` names that look like typos, each with the near name (`tnoe`: did you mean `tone`?): no template of the
 * tactic uses it, its `vars:` do not declare it, and a variable the tactic knows is near. Only near misses: a var may
 * reach what is not seen from here (a TypeScript tactic reads its vars itself, a nested tactic has templates of its
 * own), and a run given one its templates do not use does what it did before.
 */
export function misspeltVariables(prepared: PreparedTactic, vars: Record<string, unknown>): Array<{ name: string; hint: string }> {
  const known = new Set(["input", ...Object.keys(prepared.tactic.config.vars ?? {})]);
  eachTemplate(prepared, new Set(), (template, _what, _locate, available) => {
    for (const name of templatePlaceholders(template)) known.add(name);
    for (const name of available) known.add(name);
  });
  return Object.keys(vars)
    .filter((name) => !known.has(name))
    .map((name) => ({ name, hint: didYouMean(name, known) }))
    .filter((typo) => typo.hint !== "");
}

/**
 * Each template of the tactic (the turn prompt, pipeline steps, system prompts), with what it is, where, and the
 * names a value fills there besides `known` (a pipeline step's, the earlier steps' `as`; a notebook's `api_directory`).
 */
function eachTemplate(prepared: PreparedTactic, known: Set<string>, visit: (template: string, what: string, locate: () => SourceLocation | undefined, available: Set<string>) => void): void {
  const { tactic } = prepared;
  const { config } = tactic;
  if (config.tactic_type === "pipeline") {
    const available = new Set(known);
    (config.steps ?? []).forEach((step, index) => {
      visit(step.prompt ?? "{input}", `steps[${index}].prompt`, () => tactic.locate(["steps", index, "prompt"]), available);
      if (step.as) available.add(step.as);
    });
  } else if (config.tactic_type === "agent") {
    visit(config.prompt, "prompt", () => tactic.locate(["prompt"]), known);
  }
  // The notebook pattern fills its agents' `{api_directory}` itself (Step 16), with or without proxies.
  const systemKnown = config.tactic_type === "notebook" ? new Set([...known, "api_directory"]) : known;
  prepared.agents.forEach((agent, index) => {
    visit(agent.systemPrompt.text, `the system prompt of agent \`${agent.name}\``, () => tactic.locateAgent(index, [agent.systemPrompt.ref ? "system_prompt_path" : "system_prompt"]), systemKnown);
  });
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
