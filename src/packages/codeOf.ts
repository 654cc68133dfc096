import { lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseConfigData } from "../config/parseConfigData.js";
import { listPackageFiles } from "../registry/installed/filesIntegrity.js";
import { isCodeFile } from "../util/codeFile.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { isPlainObject } from "../util/isPlainObject.js";

const DATA = /\.(?:ya?ml|json)$/i;
const LANGUAGES: Array<[RegExp, string]> = [
  [/\.(?:ts|mts|cts)$/i, "TypeScript"],
  [/\.(?:js|mjs|cjs)$/i, "JavaScript"],
  [/\.py$/i, "Python"],
  [/\.(?:sh|bash)$/i, "a shell script"],
];

/**
 * The code a package folder carries, one line per file: what lllm would run or load from it. Read from the files
 * alone (nothing is imported or executed): tool, proxy and tactic code, helper modules, Python and shell scripts,
 * executable files, the commands that YAML declares (command tools, MCP stdio servers), and tactics that run the
 * model's code without a sandbox. Empty for a package of prompts and YAML tactics alone, which needs no consent.
 */
export function codeOf(dir: string): string[] {
  const lines: string[] = [];
  for (const listed of listPackageFiles(dir)) {
    const file = path.join(dir, ...listed.split("/"));
    const relative = oneLine(listed);
    const section = listed.split("/")[0];
    if (isCodeFile(listed) && !listed.endsWith(".d.ts")) {
      const language = LANGUAGES.find(([pattern]) => pattern.test(listed))![1];
      const role = section === "tools" ? "tool code, run when the package loads" : section === "proxies" ? "proxy code, run when the package loads" : section === "tactics" ? "a tactic in code, run when used" : "code that the package's modules may load";
      lines.push(`${relative}: ${language}, ${role}`);
      continue;
    }
    const language = LANGUAGES.find(([pattern]) => pattern.test(listed));
    if (language !== undefined) {
      lines.push(`${relative}: ${language[1]}`);
      continue;
    }
    if ((lstatSync(file).mode & 0o111) !== 0) {
      lines.push(`${relative}: an executable file`);
      continue;
    }
    if (DATA.test(listed) && listed !== "package.json") {
      for (const command of commandsIn(file)) lines.push(`${relative}: ${command}`);
    }
  }
  return lines;
}

/**
 * What a YAML or JSON file makes run: `command:` of a tool, of an MCP server, anywhere in the file, a `sandbox`
 * whose backend is `none`, and the keys of yours it sends (`keysSent`).
 */
function commandsIn(file: string): string[] {
  let data: unknown;
  try {
    data = parseConfigData(readFileSync(file, "utf8"), file);
  } catch {
    return []; // a file that does not parse runs nothing: loading it fails
  }
  const found: string[] = [];
  const walk = (value: unknown, key: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
      return;
    }
    if (!isPlainObject(value)) return;
    const command = value.command;
    if (typeof command === "string" || (Array.isArray(command) && command.every((part) => typeof part === "string"))) {
      const args = Array.isArray(value.args) ? value.args.filter((part): part is string => typeof part === "string") : [];
      const words = [...(Array.isArray(command) ? command : [command]), ...args].join(" ");
      const what = key !== undefined && /mcp/i.test(key) ? "an MCP server started with" : "runs";
      found.push(`${what} \`${oneLine(words)}\``);
    }
    // A tactic that turns the sandbox off runs what the model writes (as its prompts, the package's, ask) as you:
    // code on this machine, as much as a script in the package.
    if (key === "sandbox" && typeof value.backend === "string" && value.backend.trim().toLowerCase() === "none") {
      found.push("runs the model's code without a sandbox (`sandbox: {backend: none}`), as you, with your files and network");
    }
    found.push(...keysSent(value, key));
    for (const [childKey, child] of Object.entries(value)) walk(child, childKey === "command" ? key : childKey);
  };
  walk(data, undefined);
  return found;
}

/** The settings that name a variable whose value lllm sends as a credential: a proxy's key, a remote agent's token… */
const KEY_VARIABLES = ["api_key_env", "token_env", "bearer_token_env", "client_secret_env", "private_key_env"];

/**
 * The keys of yours a setting sends to a server the package names: a proxy's or a model's `api_key_env` beside its
 * `base_url`, an MCP server's or a remote agent's token beside its `url`, and a model's `base_url` alone (the model's
 * usual key, `OPENAI_API_KEY`, goes there). As much as code: a package of YAML alone could send your key to its author.
 */
function keysSent(value: Record<string, unknown>, key: string | undefined): string[] {
  const url = [value.base_url, value.url].find((candidate): candidate is string => typeof candidate === "string");
  const names = KEY_VARIABLES.map((setting) => value[setting]).filter((name): name is string => typeof name === "string").map(oneLine);
  if (url === undefined) return names.map((name) => `sends $${name} to the server it names`);
  const where = oneLine(url);
  if (names.length > 0) return names.map((name) => `sends $${name} to \`${where}\``);
  return key === "invoker_config" && typeof value.base_url === "string" ? [`sends the model's key (e.g. $OPENAI_API_KEY) to \`${where}\``] : [];
}

/** A text shown in one line of the list: its line breaks escaped, so that a package cannot add lines of its own. */
function oneLine(text: string): string {
  return escapeControlCharacters(text, { all: true });
}
