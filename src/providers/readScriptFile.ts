import { readFileSync, statSync } from "node:fs";
import type { Document, LineCounter } from "yaml";
import { CONFIG_LIMITS } from "../config/configLimits.js";
import { parseYamlDocument } from "../config/parseYamlDocument.js";
import { readParsedYaml, storeParsedYaml } from "../config/parsedYamlCache.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { firstLine } from "../util/firstLine.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { yaml } from "../util/lazyYaml.js";
import { checkTurns, formatScriptPath, type Script, type ScriptedTurn, type ScriptProblem } from "./ScriptedTurn.js";

/**
 * Bytes a model script (`--model scripted:`, a cassette, a `lllm logs replay` script) may have. Far above a real
 * one (a dialog cannot outgrow its model's context window), it keeps a hostile or broken file from taking lllm down
 * or holding it deaf to Ctrl-C and SIGTERM while the parser runs (16 MB took some 9 s on a busy machine).
 */
export const SCRIPT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Read a `scripted:` model file (YAML or JSON; `file` is absolute): the script and the file's whole data (a
 * cassette's notes, such as the tactic it was recorded for, sit beside the turns). An unreadable or invalid file is
 * a `ConfigError` naming the file, the line, and what is wrong.
 */
export function readScriptFile(file: string, options: { what?: string } = {}): { script: Script; data: Record<string, unknown> | unknown[] } {
  const what = options.what ?? "model script";
  let text: string;
  try {
    // Checked before reading, so a huge file is refused without being read into memory.
    const size = statSync(file).size;
    if (size > SCRIPT_MAX_BYTES) throw tooLarge(file, what, size);
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a folder, not a file" : `cannot be read: ${(error as Error).message}`;
    throw new ConfigError("config_not_found", `${what} ${file} ${reason}`, {
      hint: "`--model scripted:<file>` takes a YAML or JSON file holding a list of turns",
      cause: error,
    });
  }
  // A text parsed before (the CLI's cache of parsed YAML): a replay of many cassettes skips the slow parser.
  const cached = readParsedYaml(text);
  if (cached !== undefined) {
    const { script, problems } = readScript(cached);
    if (problems.length === 0) return { script: script!, data: cached as Record<string, unknown> | unknown[] };
  }
  const lineCounter = new yaml.LineCounter();
  // Within the size limit and the config files' nesting depth (the composer recurses); duplicate keys and aliases
  // the data could not hold (a cycle, a "billion laughs") are problems, as in tactic files.
  const { document, problems: yamlProblems } = parseYamlDocument(text, { file, lineCounter, maxBytes: scriptLimit(what) });
  if (yamlProblems.length > 0) {
    throw ConfigError.fromProblems(
      "config_invalid_script",
      yamlProblems.map((problem) => {
        const { line, col } = lineCounter.linePos(problem.offset);
        // The location is reported separately, so yaml's own "at line L, column C" is cut.
        const message = firstLine(problem.message).replace(/ at line \d+, column \d+:?$/, "");
        return { message: problem.code.includes("ALIAS") ? `${what}: ${message}` : `${what} is not valid YAML/JSON: ${message}`, location: { file, line, column: col } };
      }),
    );
  }
  const data = scriptData(document, file, what);
  const { script, problems } = readScript(data);
  if (problems.length > 0) {
    throw ConfigError.fromProblems("config_invalid_script", problems.map((problem) => locateProblem(problem, file, document, lineCounter)));
  }
  storeParsedYaml(text, data);
  return { script: script!, data: data as Record<string, unknown> | unknown[] };
}

/** The plain data of a parsed script; aliases are expanded within the yaml library's bound on repeats. */
function scriptData(document: Document, file: string, what: string): unknown {
  try {
    return document.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount }) as unknown;
  } catch (error) {
    throw new ConfigError("config_invalid_script", `${what}: cannot expand its aliases: ${error instanceof Error ? error.message : String(error)}`, { location: { file } });
  }
}

/**
 * The script a file's data holds: a list of turns, `{turns: [...]}`, or `{agents: {name: [...]}}` (other keys,
 * such as the `run` and `input` that `lllm logs replay` writes, are notes for the reader).
 */
export function readScript(data: unknown): { script?: Script; problems: ScriptProblem[] } {
  const expected = "expected a list of turns, {turns: [...]} or {agents: {<agent>: [...]}}";
  if (data === null || data === undefined) return { problems: [{ path: [], message: `model script is empty; ${expected}` }] };
  if (Array.isArray(data)) return { script: data as ScriptedTurn[], problems: checkTurns(data) };
  if (typeof data !== "object") return { problems: [{ path: [], message: `model script is ${typeof data}; ${expected}` }] };
  const record = data as Record<string, unknown>;
  if ("turns" in record && "agents" in record) return { problems: [{ path: ["agents"], message: "a model script has `turns` (one list for every agent) or `agents` (a list per agent), not both" }] };
  if ("turns" in record) return { script: record["turns"] as ScriptedTurn[], problems: checkTurns(record["turns"]).map((problem) => ({ ...problem, path: ["turns", ...problem.path] })) };
  if (!("agents" in record)) {
    const keys = Object.keys(record);
    return { problems: [{ path: [], message: `model script has no \`turns\` or \`agents\` key (found ${keys.map((key) => `\`${key}\``).join(", ") || "no keys"}); ${expected}` }] };
  }
  const agents = record["agents"];
  if (!isPlainObject(agents)) return { problems: [{ path: ["agents"], message: "agents must be a mapping of agent names to lists of turns" }] };
  const problems = Object.entries(agents).flatMap(([agent, turns]) => checkTurns(turns).map((problem) => ({ ...problem, path: ["agents", agent, ...problem.path] })));
  return { script: { agents: agents as Record<string, ScriptedTurn[]> }, problems };
}

/** Point a problem at the closest node of the file that exists along its path. */
function locateProblem(problem: ScriptProblem, file: string, document: Document, lineCounter: LineCounter): ConfigProblem {
  const where = problem.path.length > 0 ? `${formatScriptPath(problem.path)}: ` : "";
  for (let length = problem.path.length; length >= 0; length -= 1) {
    const node: unknown = length === 0 ? document.contents : document.getIn(problem.path.slice(0, length), true);
    if (yaml.isNode(node) && node.range) {
      const position = lineCounter.linePos(node.range[0]);
      return { message: `${where}${problem.message}`, location: { file, line: position.line, column: position.col } };
    }
  }
  return { message: `${where}${problem.message}`, location: { file } };
}

function scriptLimit(what: string): { bytes: number; what: string; hint: string } {
  return { bytes: SCRIPT_MAX_BYTES, what: `a ${what}`, hint: "a script holds the model's turns of one run; record a shorter run, or split the cases" };
}

function tooLarge(file: string, what: string, size: number): ConfigError {
  const megabytes = (bytes: number): string => `${(Math.ceil((bytes / (1024 * 1024)) * 10) / 10).toString()} MB`;
  const limit = scriptLimit(what);
  return new ConfigError("config_too_large", `${what} ${file} is ${megabytes(size)}; ${limit.what} may be at most ${megabytes(SCRIPT_MAX_BYTES)}`, { location: { file }, hint: limit.hint });
}
