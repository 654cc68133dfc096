import { ConfigError } from "../errors.js";

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
