import { distance } from "fastest-levenshtein";
import { environmentValue, keysFile, keysWriteTarget, readKeys, VARIABLE_NAME, writeKeys } from "../config/keysFile.js";
import { ConfigError, InterruptedError } from "../errors.js";
import { PROVIDER_ROUTES } from "../providers/providerRoutes.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { SCHEMA_VERSION, writeErr, writeOut } from "./output.js";

/**
 * `lllm keys`: API keys kept in `$LLLM_HOME/keys.json` (0600) instead of the shell's environment. A key is
 * stored under the variable name its readers ask for (`OPENAI_API_KEY`, a tactic's `api_key_env`, a proxy's
 * `api_key_env`); a provider prefix (`openai`) stands for its key variable. Values are never printed, but by
 * `keys get`, which exists for scripts.
 */

/** The variable a NAME argument stands for: itself, or a provider prefix's key variable. */
function variableOf(name: string): string {
  const route = PROVIDER_ROUTES.find((candidate) => candidate.prefix === name.toLowerCase() && candidate.apiKeyEnv !== undefined);
  if (route?.apiKeyEnv !== undefined && name === name.toLowerCase()) return route.apiKeyEnv;
  if (!VARIABLE_NAME.test(name)) {
    throw new ConfigError("usage_key_name", `\`${name}\` is not a variable name: a key is stored under the variable its readers ask for (letters, digits, _)`, {
      hint: `e.g. lllm keys set OPENAI_API_KEY, or a provider: ${PROVIDER_ROUTES.filter((route) => route.apiKeyEnv !== undefined).map((route) => route.prefix).join(", ")}`,
    });
  }
  return name;
}

export interface KeysSetOptions {
  /** The stream the value is read from: a prompt without echo on a terminal, else all of it. */
  stdin?: NodeJS.ReadStream;
}

/**
 * A name that looks like a provider mistyped (`opnai`, `OPENAI`) would be stored as a variable no one reads: refused
 * before a value is asked for, with the provider it is close to. Only for `set`: `get` and `remove` must still
 * reach a key stored so before.
 */
function refuseProviderTypo(name: string): void {
  const lower = name.toLowerCase();
  if (name === lower && PROVIDER_ROUTES.some((route) => route.prefix === lower)) return;
  const near = PROVIDER_ROUTES.filter((route) => route.apiKeyEnv !== undefined && distance(lower, route.prefix) <= Math.min(2, Math.floor(route.prefix.length / 3)));
  if (near.length === 0) return;
  const choices = near.map((route) => `\`${route.prefix}\` (stored as ${route.apiKeyEnv})`).join(" or ");
  throw new ConfigError("usage_key_name", `\`${name}\` is not a provider: did you mean ${choices}?`, {
    hint: `lllm keys set ${near[0]!.prefix}; a key is stored under the variable its readers ask for, such as ${near[0]!.apiKeyEnv}`,
  });
}

export async function keysSetCommand(name: string, options: KeysSetOptions = {}): Promise<void> {
  refuseProviderTypo(name);
  const variable = variableOf(name);
  const file = keysFile();
  // A bad file, or a keys.json linked to nowhere, is reported before a value is asked for.
  keysWriteTarget(file);
  const keys = readKeys(file);
  const stdin = options.stdin ?? process.stdin;
  const value = stdin.isTTY ? await promptHidden(`Value of ${variable} (not shown): `, stdin) : trimLineEnd(await readAll(stdin));
  if (value === "") throw new ConfigError("usage_key_value", `no value given for ${variable}: nothing was stored`, { hint: `type it at the prompt, or pipe it: printf %s "$KEY" | lllm keys set ${variable}` });
  if (/[\r\n\0]/.test(value)) throw new ConfigError("usage_key_value", `the value for ${variable} holds a line break or a NUL: a key is one line`, { hint: "give the key alone, on one line" });
  writeKeys(file, { ...keys, [variable]: value });
  writeErr(`lllm: stored ${variable} in ${file}${variable === name ? "" : ` (the key of ${name}/ models)`}`);
  if ((environmentValue(process.env, variable) ?? "") !== "") writeErr(`lllm: note: ${variable} is set in the environment too, and the environment wins`);
}

export function keysListCommand(options: { json?: boolean }): void {
  const file = keysFile();
  const names = Object.keys(readKeys(file)).sort();
  const overridden = names.filter((name) => (environmentValue(process.env, name) ?? "") !== "");
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, file, keys: names.map((name) => ({ name, overridden_by_environment: overridden.includes(name) })) }, null, 2));
    return;
  }
  if (names.length === 0) {
    writeErr(`lllm: no keys in ${file} (add one with \`lllm keys set NAME\`)`);
    return;
  }
  writeOut(names.map((name) => (overridden.includes(name) ? `${name}  (the environment's value is used)` : name)).join("\n"));
}

export function keysGetCommand(name: string): void {
  const variable = variableOf(name);
  const file = keysFile();
  const keys = readKeys(file);
  if (!Object.hasOwn(keys, variable)) throw notFound(variable, file);
  const value = keys[variable]!;
  // The value itself is the data asked for: printed as it is, not through the redaction of every other output.
  writeOwnStdout(`${value}\n`);
}

export function keysRemoveCommand(name: string): void {
  const variable = variableOf(name);
  const file = keysFile();
  // A link to nowhere is said as what it means here: nothing is written (readKeys would say no key could be read).
  keysWriteTarget(file);
  const keys = readKeys(file);
  if (!Object.hasOwn(keys, variable)) throw notFound(variable, file);
  delete keys[variable];
  writeKeys(file, keys);
  writeErr(`lllm: removed ${variable} from ${file}`);
}

export function keysPathCommand(): void {
  writeOut(keysFile());
}

function notFound(variable: string, file: string): ConfigError {
  return new ConfigError("keys_not_found", `no key ${variable} in ${file}`, { hint: "`lllm keys list` shows the names stored; `lllm keys set NAME` adds one" });
}

function trimLineEnd(text: string): string {
  return text.replace(/\r?\n$/, "");
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** Read one line from a terminal without echoing it (raw mode: Enter ends it, Backspace erases, Ctrl-C cancels). */
function promptHidden(question: string, stdin: NodeJS.ReadStream): Promise<string> {
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (): void => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    const onData = (chunk: string): void => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\u0004") {
          finish();
          resolve(value);
          return;
        }
        if (char === "\u0003") {
          finish();
          reject(new InterruptedError("interrupted", "cancelled: nothing was stored"));
          return;
        }
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else if (char >= " ") value += char;
      }
    };
    stdin.on("data", onData);
  });
}
