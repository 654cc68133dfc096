import { ConfigError } from "../errors.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { misspeltVariables } from "../tactics/templateVariables.js";

/** `--var key=value` flags (repeatable) as template variables. */
export function parseVars(entries: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const entry of entries) {
    const index = entry.indexOf("=");
    if (index <= 0) throw new ConfigError("usage_var", `--var \`${entry}\` must be key=value`, { location: { file: "--var" }, hint: "e.g. --var city=Paris" });
    vars[entry.slice(0, index)] = entry.slice(index + 1);
  }
  return vars;
}

/** Warn of each `--var` that looks like a typo of a variable the tactic knows (see `misspeltVariables`): it ran as if not given. */
export function warnMisspeltVars(prepared: PreparedTactic, vars: Record<string, string>, warn: (message: string) => void): void {
  for (const typo of misspeltVariables(prepared, vars)) warn(`--var ${typo.name}: no template of the tactic uses {${typo.name}}, nor do its \`vars:\` declare it; ${typo.hint}`);
}
