import { resolve } from "node:path";
import { ConfigError, ProviderError } from "../errors.js";
import type { Model, ModelRequest, ModelResponse } from "./Model.js";
import { checkTurns, resolveTurn, splitIntoChunks, toConfigProblems } from "./ScriptedTurn.js";
import type { ResolvedTurn, Script, ScriptedTurn } from "./ScriptedTurn.js";
import { readScriptFile } from "./readScriptFile.js";
import { expectedRequests, requestDifference, type ExpectedRequest } from "./scriptedRequest.js";
import { replayDivergence, replayExhausted, type PendingTurn } from "./replayDivergence.js";
import { plural } from "../util/plural.js";

export interface ScriptedModelOptions {
  /** The model name reported by `name`; default `scripted`. */
  name?: string;
  /**
   * The turns were made by lllm from its own record (a run's journal), not written by a person: they are not checked
   * again (a resume of a long run would otherwise check every recorded message before its first step).
   */
  fromRecord?: boolean;
  /** What a replay that diverged tells the user to do when the change is intended (how to record again). */
  rerecordHint?: string;
}

/** One list of turns, with the request each answered (when recorded) and which are used. */
interface TurnList {
  turns: readonly ScriptedTurn[];
  expected: Array<ExpectedRequest | undefined>;
  used: boolean[];
  /** The first turn not used yet. */
  next: number;
}

const DEFAULT_RERECORD_HINT = "If the change is intended, record a new run and write its script again with `lllm logs replay` (a replay can only answer what was recorded).";

/**
 * A `Model` that replays scripted turns and records every request, so a test can drive the run loop without a
 * network and then check what the loop sent. A call with no turn left fails loudly instead of inventing an answer;
 * `assertComplete()` fails when turns were never used.
 *
 * Turns that record their request (`lllm logs replay`, `lllm test --record`) are matched to requests by content:
 * an agent's request takes the first unused turn of its list that answered the same request, so dialogs of one
 * agent that run at once (a nested tactic called twice in a round) still get their own turns; a request that no
 * recorded turn answered fails with a diff against the closest one. Turns without one are replayed in order.
 */
export class ScriptedModel implements Model {
  readonly name: string;
  /** Every request received, in order. `messages` is copied at call time, so later pushes by the loop do not
   * change what was recorded. */
  readonly requests: ModelRequest[] = [];
  /** By agent name; the key `undefined` holds the one list of a script that is not per agent. */
  private readonly lists = new Map<string | undefined, TurnList>();
  private readonly perAgent: boolean;
  private readonly rerecordHint: string;
  /** Requests answered by `recordedAnswer` (not kept in `requests`). */
  #answered = 0;
  /** Answers taken from a resumed run's record in its place (`adopt`): the calls are numbered on from them. */
  #adopted = 0;
  /** Why the replay stopped matching the recording, once it did. */
  private diverged: unknown;
  /** Recorded tool results still to be checked, by tool-call id (see `ScriptedToolCall.result`); for turns
   * replayed in order, whose requests were not recorded. */
  private readonly expectedResults = new Map<string, { turn: number; name: string; arguments: string; result: string }>();

  constructor(script: Script, options: ScriptedModelOptions = {}) {
    this.perAgent = !Array.isArray(script);
    const lists: Array<[string | undefined, readonly ScriptedTurn[]]> = Array.isArray(script) ? [[undefined, script as readonly ScriptedTurn[]]] : Object.entries((script as { agents: Record<string, readonly ScriptedTurn[]> }).agents ?? {});
    const problems = options.fromRecord ? [] : lists.flatMap(([agent, turns]) => checkTurns(turns).map((problem) => ({ ...problem, path: agent === undefined ? problem.path : ["agents", agent, ...problem.path] })));
    if (problems.length > 0) throw ConfigError.fromProblems("config_invalid_script", toConfigProblems(problems, "scripted turn "));
    for (const [agent, turns] of lists) this.lists.set(agent, { turns: [...turns], expected: expectedRequests(turns), used: turns.map(() => false), next: 0 });
    this.name = options.name ?? "scripted";
    this.rerecordHint = options.rerecordHint ?? DEFAULT_RERECORD_HINT;
  }

  /** How many scripted turns have not been used yet. */
  get remaining(): number {
    let count = 0;
    for (const list of this.lists.values()) count += list.used.filter((used) => !used).length;
    return count;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push({ ...request, messages: [...request.messages] });
    const callNumber = this.requests.length + this.#adopted;
    if (request.signal?.aborted) throw request.signal.reason;
    // Once a replay went off the recording, every later call fails with that first cause: a nested tactic's tool
    // turns the error into text for its caller, whose request then differs too, and the cause is what to show.
    if (this.diverged) throw this.diverged;
    let list: TurnList;
    let index: number;
    try {
      this.checkToolResults(request, callNumber);
      const found = this.listFor(request);
      list = found.list;
      index = this.pick(list, found.agent, request, callNumber);
    } catch (error) {
      this.diverged = error;
      throw error;
    }
    const turn = list.turns[index]!;
    const resolved = resolveTurn(turn, callNumber, () => JSON.stringify(request.messages));
    // As a live model's: a turn with neither text nor tool calls is no answer, and a run that took it would pass a
    // test that the live model fails (exit 0 with nothing). A cut (`length`) or filtered one is the loop's to judge.
    if ((resolved.text ?? "") === "" && resolved.toolCalls.length === 0 && resolved.finishReason !== "length" && resolved.finishReason !== "content_filter") {
      throw new ProviderError("provider_script_empty_turn", `scripted turn ${index + 1} has no text and no tool calls: an empty answer is no answer (a live model's would fail the run)`, {
        hint: "Give the turn its text, or tool calls; a turn that stands for a refusal or a cut answer says `finish_reason: content_filter` or `length`.",
      });
    }
    if (typeof turn !== "string" && list.expected[index] === undefined) {
      (turn.tool_calls ?? []).forEach((call, position) => {
        const sent = resolved.toolCalls[position];
        if (call.result !== undefined && sent) this.expectedResults.set(sent.id, { turn: callNumber, name: sent.name, arguments: sent.arguments, result: call.result });
      });
    }
    return this.answer(list, index, request, resolved);
  }

  /**
   * The recorded answer to this request, when the script has one: the first unused turn of the request's agent that
   * answered the same request (or, for turns that did not record their request, the agent's next turn). `undefined`
   * when there is none: unlike `generate`, nothing fails and nothing is taken as a divergence, so that a caller can ask
   * another model instead (a resumed run goes on live from its first step the journal did not answer). The request
   * is not kept in `requests` (its caller knows what it asked).
   */
  recordedAnswer(request: ModelRequest): ModelResponse | undefined {
    if (request.signal?.aborted) throw request.signal.reason;
    const list = this.perAgent ? (request.agent === undefined ? undefined : this.lists.get(request.agent)) : this.lists.get(undefined);
    if (!list || list.next >= list.turns.length) return undefined;
    let index: number | undefined;
    if (list.expected[list.next] === undefined) index = list.next;
    else {
      for (let candidate = list.next; candidate < list.turns.length && index === undefined; candidate += 1) {
        const expected = list.expected[candidate];
        if (!list.used[candidate] && expected !== undefined && requestDifference(expected, request) === undefined) index = candidate;
      }
    }
    if (index === undefined) return undefined;
    this.#answered += 1;
    return this.answer(list, index, request, resolveTurn(list.turns[index]!, this.requests.length + this.#answered, () => JSON.stringify(request.messages)));
  }

  /**
   * A resumed run's recorded answer, given in place of this model's (see `Model.adopt`; the answers of other models,
   * by the name the record keeps, are not this script's): a list replayed in order
   * goes on from the turn after it, and the calls are numbered on (a resumed run's next turn is its third, not its
   * first again). A list whose turns recorded their requests is left as it is: it matches the requests to come by
   * their content.
   */
  adopt(response: ModelResponse, agent?: string): void {
    // An answer another model gave (an agent on another script): not one of this script's turns.
    if (response.model !== undefined && response.model !== this.name) return;
    this.#adopted += 1;
    const list = this.perAgent ? (agent === undefined ? undefined : this.adoptingList(agent)) : this.lists.get(undefined);
    if (!list || list.next >= list.turns.length || list.expected[list.next] !== undefined) return;
    list.used[list.next] = true;
    while (list.next < list.turns.length && list.used[list.next]) list.next += 1;
  }

  /** The list an agent's turns come from, as `listFor` finds it; none when the script has no turns for it. */
  private adoptingList(agent: string): TurnList | undefined {
    try {
      return this.listFor({ agent, messages: [] }).list;
    } catch {
      return undefined;
    }
  }

  /** Use turn `index` of `list` for this request: its answer, streamed when the request asks. */
  private answer(list: TurnList, index: number, request: ModelRequest, resolved: ResolvedTurn): ModelResponse {
    list.used[index] = true;
    while (list.next < list.turns.length && list.used[list.next]) list.next += 1;
    if (request.onText && resolved.text) for (const chunk of splitIntoChunks(resolved.text)) request.onText(chunk);
    return {
      message: { role: "assistant", content: resolved.text },
      toolCalls: resolved.toolCalls,
      usage: resolved.usage,
      finishReason: resolved.finishReason,
      ...(resolved.model !== undefined ? { model: resolved.model } : {}),
      ...(resolved.carry !== undefined ? { carry: resolved.carry } : {}),
    };
  }

  /** The list the request's agent replays from. */
  private listFor(request: ModelRequest): { list: TurnList; agent: string | undefined } {
    if (!this.perAgent) return { list: this.lists.get(undefined)!, agent: request.agent };
    const agent = request.agent;
    const own = agent === undefined ? undefined : this.lists.get(agent);
    if (own) return { list: own, agent };
    // An agent of a tactic used as a tool asks as `<tool>/<agent>`; scripts written before it was named so list it
    // by its own name (`writer` for `brief/writer`, then `inner/writer` for `outer/inner/writer`, …).
    for (let slash = agent?.indexOf("/") ?? -1; agent !== undefined && slash >= 0; slash = agent.indexOf("/", slash + 1)) {
      const shorter = this.lists.get(agent.slice(slash + 1));
      if (shorter) return { list: shorter, agent: agent.slice(slash + 1) };
    }
    // A caller that does not name its agent (a model used on its own): the one list, or the list that recorded this request.
    if (agent === undefined) {
      if (this.lists.size === 1) {
        const [name, list] = [...this.lists.entries()][0]!;
        return { list, agent: name };
      }
      for (const [name, list] of this.lists) {
        if (list.turns.some((_, index) => !list.used[index] && list.expected[index] !== undefined && requestDifference(list.expected[index]!, request) === undefined)) return { list, agent: name };
      }
    }
    const known = [...this.lists.keys()].map((name) => `\`${name}\``).join(", ");
    throw new ProviderError("provider_script_no_agent", `the script has no turns for ${agent === undefined ? "a model call that names no agent" : `agent \`${agent}\``}; it has turns for ${known || "no agent"}`, {
      hint: agent === undefined ? "Give the request's `agent`, or use a script with one list of turns." : `Add the agent's turns under \`agents: {${agent}: [...]}\`, or ${this.rerecordHint.charAt(0).toLowerCase()}${this.rerecordHint.slice(1)}`,
    });
  }

  /** The turn that answers this request: the first unused one in order, or, when requests were recorded, the first unused one that recorded this request. */
  private pick(list: TurnList, agent: string | undefined, request: ModelRequest, callNumber: number): number {
    if (list.next >= list.turns.length) {
      if (!this.perAgent && list.expected.every((expected) => expected === undefined)) {
        throw new ProviderError("provider_script_exhausted", `ScriptedModel: no scripted turn left for call #${callNumber}; the script has ${plural(list.turns.length, "turn")}`, {
          hint: "add a turn to the script, or check why the run made one more model call than expected",
        });
      }
      throw replayExhausted(this.perAgent ? agent : undefined, list.turns.length, request, this.rerecordHint);
    }
    if (list.expected[list.next] === undefined) return list.next;
    const pending: PendingTurn[] = [];
    for (let index = list.next; index < list.turns.length; index += 1) {
      const expected = list.expected[index];
      if (list.used[index] || expected === undefined) continue;
      if (requestDifference(expected, request) === undefined) return index;
      pending.push({ index, expected });
    }
    throw replayDivergence({ agent: this.perAgent ? agent : undefined, total: list.turns.length, pending, request, hint: this.rerecordHint });
  }

  /**
   * Compare the tool results this request carries with the recorded ones: the first that differs means the tools
   * no longer answer as they did when the script was recorded, and the turns after it no longer fit.
   */
  private checkToolResults(request: ModelRequest, callNumber: number): void {
    if (this.expectedResults.size === 0) return;
    for (const message of request.messages) {
      if (message.role !== "tool") continue;
      const expected = this.expectedResults.get(message.toolCallId);
      if (!expected) continue;
      this.expectedResults.delete(message.toolCallId);
      if (message.content === expected.result) continue;
      throw new ProviderError("provider_replay_diverged", `the replay diverged at turn ${expected.turn}: its tool call ${expected.name}(${expected.arguments}) now returns ${quote(message.content)}, but the recorded run got ${quote(expected.result)}; turn ${callNumber} onwards no longer fits`, {
        hint: `A tool now answers differently from when the script was recorded. ${this.rerecordHint}`,
      });
    }
  }

  /** Throw when scripted turns were left unused: the run stopped earlier than the test expected. */
  assertComplete(): void {
    const unused = [...this.lists.entries()].map(([agent, list]) => ({ agent, left: list.used.filter((used) => !used).length, total: list.turns.length })).filter((entry) => entry.left > 0);
    if (unused.length === 0) return;
    if (!this.perAgent) {
      const { left, total } = unused[0]!;
      throw new ProviderError("provider_script_incomplete", `ScriptedModel: ${left} of ${plural(total, "scripted turn")} ${left === 1 ? "was" : "were"} never used (the run made ${plural(this.requests.length, "call")})`);
    }
    throw new ProviderError("provider_script_incomplete", `ScriptedModel: turns were never used: ${unused.map((entry) => `${entry.left} of ${entry.total} of agent \`${entry.agent}\``).join(", ")} (the run made ${plural(this.requests.length, "call")})`);
  }

  /**
   * Load a script from a YAML or JSON file: a list of turns, `{turns: [...]}` or `{agents: {name: [...]}}`. A relative path is resolved
   * against `cwd` (default: the process's working folder). An unreadable or invalid file is a `ConfigError`
   * naming the file, the line, and what is wrong.
   */
  static fromFile(path: string, options: ScriptedModelOptions & { cwd?: string } = {}): ScriptedModel {
    const { cwd, ...modelOptions } = options;
    const { script } = readScriptFile(resolve(cwd ?? process.cwd(), path));
    return new ScriptedModel(script, { ...modelOptions, name: options.name ?? `scripted:${path}` });
  }
}

/** A result text for an error message: quoted, on one line, cut when long. */
function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > 160 ? `${flat.slice(0, 159)}…` : flat);
}
