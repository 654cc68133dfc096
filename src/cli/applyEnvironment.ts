import { ConfigError } from "../errors.js";
import { fillFromKeys, keysFile, readKeys } from "../config/keysFile.js";
import { readEnvFile } from "../config/readEnvFile.js";
import { isCodeLoadingVariable } from "../config/codeLoadingVariable.js";
import { warn } from "./output.js";
import { registerEnvironmentSecrets, registerSecret } from "../util/redact.js";

export interface ApplyEnvironmentOptions {
  /** `--env-file` files, in the order given: a later file's value wins over an earlier one's. */
  envFiles?: string[];
  /** Whether to fill in the keys of `$LLLM_HOME/keys.json` (not for `lllm keys` and `lllm doctor`, which read it themselves). */
  keys: boolean;
  /** Given: a keys file lllm refuses (its mode, bad JSON) is passed here and its keys are not used, instead of stopping the command. */
  onKeysError?: (error: ConfigError) => void;
}

/**
 * Complete the process's environment before a command runs, so that every reader of a variable (providers,
 * `api_key_env`, proxies' keys, base URLs) finds it where it always looked: in `process.env`. The environment
 * wins over `--env-file`, which wins over the keys file; only variables that are unset (or empty) are filled in.
 * Every key's value joins the redaction set whatever its name (a file's other values only when named like a
 * credential, as for the environment). Values set here are not in the block `/proc/<pid>/environ` shows. Variables
 * that load code (`NODE_OPTIONS`, `LD_PRELOAD`, `BASH_ENV`…: see `isCodeLoadingVariable`) are dropped from the
 * files, with a warning: lllm and the programs it starts (command tools, MCP servers, kernels) never get them so.
 */
export function applyEnvironment(options: ApplyEnvironmentOptions, env: NodeJS.ProcessEnv = process.env): void {
  const given = new Set(Object.keys(env).filter((name) => env[name] !== ""));
  const fromFiles: Record<string, string> = {};
  for (const file of options.envFiles ?? []) {
    const dropped: string[] = [];
    const { vars, malformed } = readEnvFile(file);
    // The line's number, not its text: it may hold a key.
    if (malformed.length > 0) warn(`--env-file ${file}:${malformed.join(",")}: ${malformed.length === 1 ? "a line" : "lines"} without NAME=value, ignored (a dotenv file holds NAME=value, \`export NAME=value\` and # comment lines)`);
    for (const [name, value] of Object.entries(vars)) {
      if (isCodeLoadingVariable(name)) dropped.push(name);
      else fromFiles[name] = value;
    }
    if (dropped.length > 0) warn(droppedWarning(file, dropped, env));
  }
  for (const [name, value] of Object.entries(fromFiles)) if (!given.has(name)) env[name] = value;
  registerEnvironmentSecrets(fromFiles);
  if (!options.keys) return;
  // After the env files: one of them may set LLLM_HOME.
  let keys: Record<string, string>;
  try {
    keys = readKeys(keysFile(env));
  } catch (error) {
    if (!(error instanceof ConfigError) || !options.onKeysError) throw error;
    options.onKeysError(error);
    return;
  }
  for (const value of Object.values(keys)) registerSecret(value);
  fillFromKeys(env, keys);
}

function droppedWarning(file: string, names: string[], env: NodeJS.ProcessEnv): string {
  const listed = names.join(", ");
  let text = `--env-file ${file}: ignored ${listed}: a variable that makes programs load code is never taken from a dotenv file (nor passed to command tools, MCP servers or kernels)`;
  // Node reads every `--env-file` of its command line itself, up to a `--`, and applies the file's NODE_OPTIONS to
  // its own process: the `lllm` command starts Node with that `--` (bin/lllm.js), `node …/lllm.js --env-file` does not.
  if (names.some((name) => name.toUpperCase() === "NODE_OPTIONS") && env.NODE_OPTIONS === undefined) {
    text += `. Started as \`node …/lllm.js\` (not as the \`lllm\` command), Node itself applies that NODE_OPTIONS to lllm's own process before lllm starts: remove it from the file`;
  }
  return text;
}
