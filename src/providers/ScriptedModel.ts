import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Document, LineCounter } from "yaml";
import { yaml } from "../util/lazyYaml.js";
import { aliasProblems } from "../config/aliasProblems.js";
import { CONFIG_LIMITS } from "../config/configLimits.js";
import { ConfigError, ProviderError } from "../errors.js";
import type { ConfigProblem } from "../errors.js";
import type { Model, ModelRequest, ModelResponse } from "./Model.js";
import { checkTurns, formatScriptPath, resolveTurn, splitIntoChunks, toConfigProblems } from "./ScriptedTurn.js";
import type { ScriptedTurn, ScriptProblem } from "./ScriptedTurn.js";
import { firstLine } from "../util/firstLine.js";

export interface ScriptedModelOptions {
  /** The model name reported by `name`; default `scripted`. */
  name?: string;
}

/**
 * A `Model` that replays a queue of scripted turns in order and records every request, so a test can drive the
 * run loop without a network and then check what the loop sent. A call with no turn left fails loudly instead
 * of inventing an answer; `assertComplete()` fails when turns were never used.
 */
export class ScriptedModel implements Model {
  readonly name: string;
  /** Every request received, in order. `messages` is copied at call time, so later pushes by the loop do not
   * change what was recorded. */
  readonly requests: ModelRequest[] = [];
  private readonly turns: ScriptedTurn[];
  private readonly totalTurns: number;
  /** Recorded tool results still to be checked, by tool-call id (see `ScriptedToolCall.result`). */
  private readonly expectedResults = new Map<string, { turn: number; name: string; arguments: string; result: string }>();

  constructor(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}) {
    const problems = checkTurns(turns);
    if (problems.length > 0) throw ConfigError.fromProblems("config_invalid_script", toConfigProblems(problems, "scripted turn "));
    this.turns = [...turns];
    this.totalTurns = turns.length;
    this.name = options.name ?? "scripted";
  }

  /** How many scripted turns have not been used yet. */
  get remaining(): number {
    return this.turns.length;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push({ ...request, messages: [...request.messages] });
    const callNumber = this.requests.length;
    if (request.signal?.aborted) throw request.signal.reason;
    this.checkToolResults(request, callNumber);
    const turn = this.turns.shift();
    if (turn === undefined) {
      throw new ProviderError("provider_script_exhausted", `ScriptedModel: no scripted turn left for call #${callNumber}; the script has ${this.totalTurns} turns`, {
        hint: "add a turn to the script, or check why the run made one more model call than expected",
      });
    }
    const resolved = resolveTurn(turn, callNumber, JSON.stringify(request.messages));
    if (typeof turn !== "string") {
      (turn.tool_calls ?? []).forEach((call, index) => {
        const sent = resolved.toolCalls[index];
        if (call.result !== undefined && sent) this.expectedResults.set(sent.id, { turn: callNumber, name: sent.name, arguments: sent.arguments, result: call.result });
      });
    }
    if (request.onText && resolved.text) for (const chunk of splitIntoChunks(resolved.text)) request.onText(chunk);
    return {
      message: { role: "assistant", content: resolved.text },
      toolCalls: resolved.toolCalls,
      usage: resolved.usage,
      finishReason: resolved.finishReason,
    };
  }

  /**
   * Compare the tool results this request carries with the recorded ones: the first that differs means the tools
   * no longer answer as they did when the script was recorded, and the turns after it no longer fit.
   */
  private checkToolResults(request: ModelRequest, callNumber: number): void {
    for (const message of request.messages) {
      if (message.role !== "tool") continue;
      const expected = this.expectedResults.get(message.toolCallId);
      if (!expected) continue;
      this.expectedResults.delete(message.toolCallId);
      if (message.content === expected.result) continue;
      throw new ProviderError("provider_replay_diverged", `the replay diverged at turn ${expected.turn}: its tool call ${expected.name}(${expected.arguments}) now returns ${quote(message.content)}, but the recorded run got ${quote(expected.result)}; turn ${callNumber} onwards no longer fits`, {
        hint: "A tool now answers differently from when the script was recorded: if that is intended, record a new run and write its script again with `lllm logs replay`.",
      });
    }
  }

  /** Throw when scripted turns were left unused: the run stopped earlier than the test expected. */
  assertComplete(): void {
    if (this.turns.length > 0) {
      const used = this.totalTurns - this.turns.length;
      throw new ProviderError("provider_script_incomplete", `ScriptedModel: ${this.turns.length} of ${this.totalTurns} scripted turns were never used (the run made ${used} calls)`);
    }
  }

  /**
   * Load a script from a YAML or JSON file: a list of turns, or `{turns: [...]}`. A relative path is resolved
   * against `cwd` (default: the process's working folder). An unreadable or invalid file is a `ConfigError`
   * naming the file, the line, and what is wrong.
   */
  static fromFile(path: string, options: ScriptedModelOptions & { cwd?: string } = {}): ScriptedModel {
    const file = resolve(options.cwd ?? process.cwd(), path);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a folder, not a file" : `cannot be read: ${(error as Error).message}`;
      throw new ConfigError("config_not_found", `model script ${file} ${reason}`, {
        hint: "`--model scripted:<file>` takes a YAML or JSON file holding a list of turns",
        cause: error,
      });
    }
    const lineCounter = new yaml.LineCounter();
    const document = yaml.parseDocument(text, { lineCounter });
    const syntax = document.errors.map((error) => ({
      // The location is reported separately, so yaml's own "at line L, column C" is cut.
      message: `model script is not valid YAML/JSON: ${firstLine(error.message).replace(/ at line \d+, column \d+:?$/, "")}`,
      location: { file, ...(error.linePos ? { line: error.linePos[0].line, column: error.linePos[0].col } : {}) },
    }));
    // A self-referencing alias would make the turns contain themselves, and every walk over them endless.
    const aliases = syntax.length > 0 ? [] : aliasProblems(document).map((problem) => {
      const { line, col } = lineCounter.linePos(problem.offset);
      return { message: `model script: ${problem.message}`, location: { file, line, column: col } };
    });
    if (syntax.length + aliases.length > 0) throw ConfigError.fromProblems("config_invalid_script", [...syntax, ...aliases]);
    const data = scriptData(document, file);
    const wrapped = typeof data === "object" && data !== null && !Array.isArray(data);
    const turns: unknown = wrapped ? (data as Record<string, unknown>)["turns"] : data;
    const prefix = wrapped ? ["turns"] : [];
    const problems: ScriptProblem[] = [];
    if (data === null || data === undefined) problems.push({ path: [], message: "model script is empty; expected a list of turns or {turns: [...]}" });
    else if (wrapped && !("turns" in data)) {
      const keys = Object.keys(data);
      problems.push({ path: [], message: `model script has no \`turns\` key (found ${keys.map((key) => `\`${key}\``).join(", ") || "no keys"}); expected a list of turns or {turns: [...]}` });
    } else problems.push(...checkTurns(turns).map((problem) => ({ path: [...prefix, ...problem.path], message: problem.message })));
    if (problems.length > 0) {
      throw ConfigError.fromProblems("config_invalid_script", problems.map((problem) => locateProblem(problem, file, document, lineCounter)));
    }
    return new ScriptedModel(turns as ScriptedTurn[], { name: options.name ?? `scripted:${path}` });
  }
}

/** The plain data of a parsed script; aliases are expanded within the yaml library's bound on repeats. */
function scriptData(document: Document, file: string): unknown {
  try {
    return document.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount }) as unknown;
  } catch (error) {
    throw new ConfigError("config_invalid_script", `model script: cannot expand its aliases: ${error instanceof Error ? error.message : String(error)}`, { location: { file } });
  }
}

/** A result text for an error message: quoted, on one line, cut when long. */
function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > 160 ? `${flat.slice(0, 159)}…` : flat);
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
