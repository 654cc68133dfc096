import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError, type SourceLocation } from "../errors.js";
import { isSecretName, registerSecret } from "../util/redact.js";

/** `${NAME}` or `${NAME:-default}`, `$${` for a literal `${`, or a `${` that is neither (an error). */
const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * A stdio server's `env` values with `${NAME}` replaced by the variable's value in lllm's environment, and
 * `${NAME:-default}` by the default when the variable is unset or empty (as Claude Code's .mcp.json does): a secret
 * reaches the server without being written in the tactic. `$${` is a literal `${`. Strict: a variable that is unset
 * (or empty) without a default, or a `${` that is not a reference, is a config error naming the place (`locate`)
 * and the variable. A value expanded from a variable whose name says it is a credential (`…_KEY`, `…_TOKEN`…), or
 * given to a variable named so, is registered for redaction. Returns `config` itself when nothing is expanded.
 */
export function expandServerEnv(config: McpServerConfig, env: NodeJS.ProcessEnv, locate: (key: string) => SourceLocation | undefined): McpServerConfig {
  if (config.env === undefined || !Object.values(config.env).some((value) => typeof value === "string" && value.includes("${"))) return config;
  const expanded: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.env)) {
    if (typeof value !== "string" || !value.includes("${")) {
      expanded[key] = value;
      continue;
    }
    const where = (): SourceLocation | undefined => locate(key);
    let secret = isSecretName(key);
    expanded[key] = value.replace(REFERENCE, (match: string, inner: string | undefined) => {
      if (match === "$${") return "${";
      const reference = inner === undefined ? undefined : NAME.exec(inner);
      if (!reference) {
        throw new ConfigError("mcp_server_invalid", `MCP server \`${config.name}\`: env \`${key}\`: \`${match}\` is not a variable reference`, {
          hint: "Write ${NAME} or ${NAME:-default} (NAME: letters, digits and _), or $${ for a literal ${.",
          ...locationOf(where()),
        });
      }
      const [, name, fallback] = reference as unknown as [string, string, string | undefined];
      if (isSecretName(name)) secret = true;
      const given = env[name];
      if (given !== undefined && given !== "") return given;
      if (fallback !== undefined) return fallback;
      throw new ConfigError("mcp_server_env_unset", `MCP server \`${config.name}\`: env \`${key}\` names the variable \`${name}\` (\`\${${name}}\`), which is not set (or empty)`, {
        hint: `Set ${name} before the run, or give a default: \${${name}:-value}.`,
        ...locationOf(where()),
      });
    });
    if (secret) registerSecret(expanded[key]);
  }
  return { ...config, env: expanded };
}

function locationOf(location: SourceLocation | undefined): { location?: SourceLocation } {
  return location ? { location } : {};
}
