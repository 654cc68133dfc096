import type { ApprovalPolicy } from "../../approval/index.js";
import type { AgentEvent } from "../../agent/AgentEvent.js";
import type { Model, ModelResponse, Usage } from "../../providers/Model.js";
import { ScriptedModel } from "../../providers/ScriptedModel.js";
import type { ScriptedTurn } from "../../providers/ScriptedTurn.js";
import { canonicalJson } from "../../util/canonicalJson.js";
import type { RunRecord } from "../RunRecord.js";
import { combineSpend, noSpend, type RunSpend } from "../RunTally.js";
import type { JournalEntry } from "../RunStore.js";
import { StoreError } from "../StoreError.js";
import { toReplayTurns } from "../toReplayScript.js";
import { endingAnswer } from "./endingAnswer.js";
import { SampleNotRecorded, startNote, unfinishedCalls, type ToolStartNote } from "./ToolJournal.js";

export interface RunJournalOptions {
  /** The run as recorded (its model and tool calls). */
  run: RunRecord;
  /** Its tool journal. */
  tools: readonly JournalEntry[];
  /**
   * The tactic changed since (`--force`): each agent's recorded answers are replayed in order, unchecked, instead of
   * only for the very requests they answered.
   */
  force?: boolean;
}

/**
 * A recorded run, as its resume replays it: the answers of its models, the outcomes of its tool calls and the
 * approvals given, through the replay path of `lllm logs replay` and cassettes (`toReplayTurns` and
 * `ScriptedModel`: each agent's recorded turns answer the requests they answered) and the tool journal of provider
 * batch items (`ToolJournal`). Each model asks the journal first and goes on live at its first request the journal
 * did not answer.
 */
export class RunJournal {
  readonly runId: string;
  /** This attempt's number: 2 for the first resume. */
  readonly attempt: number;
  /** The first model call, tool call and step this attempt records (after the recorded ones). */
  readonly from: { modelSeq: number; toolSeq: number; step: number };
  /** What the earlier attempts took, together (the run's `max_duration` counts it). */
  readonly earlierMs: number;
  /** What the earlier attempts spent: their model calls as recorded. */
  readonly earlierSpend: RunSpend;
  /** The tool journal's entries by key: outcomes, and notes of calls that never ended (see `ToolJournal`). */
  readonly kept: ReadonlyMap<string, string>;
  /** The recorded model call whose answer ended the run (see `endingAnswer`): asked for again, live. */
  readonly askedAgain: RunRecord["model_calls"][number] | undefined;
  readonly #answers: ScriptedModel;
  readonly #replayed = new WeakSet<object>();
  /** The recorded approval decisions, in order; by call (`approvalKey`) once a call asks (most runs never do). */
  readonly #decisions: Array<{ agent: string; tool: string; args: unknown; approved: boolean }> = [];
  #approvals: Map<string, boolean[]> | undefined;
  #replayedModelCalls = 0;
  readonly #modelCalls: RunRecord["model_calls"];
  /** The live models that took every recorded answer, before their first live request. */
  readonly #adopted = new WeakSet<Model>();

  constructor(options: RunJournalOptions) {
    const { run } = options;
    this.runId = run.id;
    this.attempt = run.attempts.length + 2;
    this.from = {
      modelSeq: Math.max(-1, ...run.model_calls.map((call) => call.seq)) + 1,
      toolSeq: Math.max(-1, ...run.tool_calls.map((call) => call.seq)) + 1,
      step: Math.max(-1, ...run.model_calls.map((call) => call.step), ...run.tool_calls.map((call) => call.step)) + 1,
    };
    this.earlierMs = earlierDuration(run, options.tools);
    this.earlierSpend = run.model_calls.reduce<RunSpend>((sum, call) => combineSpend(sum, { llmCalls: 1, usage: { promptTokens: call.prompt_tokens, cachedPromptTokens: call.cached_prompt_tokens, completionTokens: call.completion_tokens, reasoningTokens: call.reasoning_tokens }, cost: call.cost }), noSpend());
    const kept = new Map<string, string>();
    const decide = (agent: string, tool: string, args: unknown, approved: boolean): void => {
      this.#decisions.push({ agent, tool, args, approved });
    };
    for (const entry of options.tools) {
      const args = parsedArguments(run.id, entry);
      if (entry.outcome !== null) kept.set(entry.key, checkedOutcome(run.id, entry));
      else kept.set(entry.key, startNote({ agent: entry.agent, name: entry.name, arguments: args, ...(entry.rerun ? { rerun: entry.rerun } : {}) }));
      // Each call that ran was approved (or needed no approval): a resume does not ask again.
      decide(entry.agent, entry.name, args, true);
    }
    for (const call of run.tool_calls) if (call.status === "refused") decide(call.agent, call.name, call.arguments, false);
    this.kept = kept;
    for (const call of run.model_calls) {
      if (call.messages.length === 0) throw damagedRecord(run.id, `its model call ${call.seq + 1} (agent \`${call.agent}\`) has no messages`);
    }
    // The answer that ended the run (a tool not offered, a refusal) is asked for again, not replayed into the same end.
    this.askedAgain = endingAnswer(run);
    // And those an earlier resume asked for again: their answers were replaced by the ones asked for then.
    const superseded = new Set(run.attempts.map((attempt) => attempt.asked_again).filter((seq) => seq !== null));
    if (this.askedAgain !== undefined) superseded.add(this.askedAgain.seq);
    const replayed = superseded.size === 0 ? run.model_calls : run.model_calls.filter((call) => !superseded.has(call.seq));
    let agents = toReplayTurns({ model_calls: replayed, tool_calls: withJournalResults(run, options.tools) }, { journal: true });
    if (options.force) agents = Object.fromEntries(Object.entries(agents).map(([agent, turns]) => [agent, turns.map(unchecked)]));
    this.#answers = new ScriptedModel({ agents }, { name: "journal", fromRecord: true });
    this.#modelCalls = run.model_calls;
  }

  /** The calls the run stopped during (started, never ended), with what was called. */
  get unfinished(): Array<{ key: string; note: ToolStartNote }> {
    return unfinishedCalls(this.kept);
  }

  /** How many model answers this attempt took from the journal. */
  get replayedModelCalls(): number {
    return this.#replayedModelCalls;
  }

  /** `live`, answering first from the journal: a request it recorded an answer to gets that answer, any other goes live. */
  model(live: Model): Model {
    return {
      name: live.name,
      generate: (request) => {
        let recorded: ModelResponse | undefined;
        try {
          recorded = this.#answers.recordedAnswer(request);
        } catch (error) {
          return Promise.reject(error);
        }
        if (!recorded) {
          // A replayed tool call's `ctx.sample`, asked again to be counted, is answered from the record or not at all.
          if (request.fromRecord === "replay") return Promise.reject(sampleNotRecorded(this.runId, request.agent));
          if (request.fromRecord === "rerun") {
            // A sample the record does not hold goes to the model as any sample does: naming no agent.
            const { agent: _agent, fromRecord: _fromRecord, ...sample } = request;
            request = sample;
          }
          // Before its first live request, a model takes every recorded answer, not only those replayed so far: two
          // copies of an agent share it, and one may go live while the other still replays (a call named anew must
          // not take a recorded call's name); and a fallback model that answered then is asked again now.
          if (live.adopt && !this.#adopted.has(live)) {
            this.#adopted.add(live);
            for (const call of this.#modelCalls) live.adopt({ message: { role: "assistant", content: call.reply }, toolCalls: call.tool_calls, usage: { promptTokens: 0, completionTokens: 0 }, ...(call.model !== null ? { model: call.model } : {}), ...(call.carry ? { carry: call.carry } : {}) }, call.agent);
          }
          return live.generate(request);
        }
        this.#replayed.add(recorded.usage);
        this.#replayedModelCalls += 1;
        return Promise.resolve(recorded);
      },
    };
  }

  /**
   * The answer asked for again (`askedAgain`), as the `model_reply` of what it spent: counted with the run (its
   * tokens, cost and limits are the earlier attempt's, and a resumed run's are those of the whole run), not recorded
   * again. Its text and tool calls are left out: they are not the run's any more.
   */
  askedAgainReply(): Extract<AgentEvent, { type: "model_reply" }> | undefined {
    const call = this.askedAgain;
    if (call === undefined) return undefined;
    const usage: Usage = { promptTokens: call.prompt_tokens, completionTokens: call.completion_tokens };
    if (call.cached_prompt_tokens) usage.cachedPromptTokens = call.cached_prompt_tokens;
    if (call.reasoning_tokens) usage.reasoningTokens = call.reasoning_tokens;
    if (call.cache_write_prompt_tokens) usage.cacheWritePromptTokens = call.cache_write_prompt_tokens;
    if (call.batch) usage.batch = true;
    this.#replayed.add(usage);
    return { type: "model_reply", agent: call.agent, round: call.round, text: "", toolCalls: [], usage, ...(call.model !== null ? { model: call.model } : {}) };
  }

  /** Whether a `model_reply` event's usage is that of an answer from the journal (its record exists already). */
  replayedReply(usage: object): boolean {
    return this.#replayed.has(usage);
  }

  /**
   * `policy`, answered first from the record: a call that ran then is approved again, one refused then is refused
   * again, without asking (each recorded decision once, in order); any other call is asked as usual.
   */
  approval(policy: ApprovalPolicy): ApprovalPolicy {
    return async (request) => {
      this.#approvals ??= byCall(this.#decisions);
      const decisions = this.#approvals.get(approvalKey(request.agent ?? "", request.tool, request.arguments));
      const decision = decisions?.shift();
      return decision ?? policy(request);
    };
  }
}

/** A turn replayed in order whatever it is asked (`--force`): the request it answered is dropped. */
function unchecked(turn: ScriptedTurn): ScriptedTurn {
  if (typeof turn === "string") return turn;
  const { request: _request, added: _added, offered: _offered, ...rest } = turn;
  return rest;
}

/**
 * The run's tool results for its turns: the recorded tool calls', and from the journal those of calls whose row the
 * stop lost (the journal's outcome is written first).
 */
function withJournalResults(run: RunRecord, tools: readonly JournalEntry[]): Array<{ agent: string; call_id: string | null; result: string | null }> {
  const rows = run.tool_calls.map((call) => ({ agent: call.agent, call_id: call.call_id, result: call.result }));
  const counted = new Map<string, number>();
  for (const row of rows) counted.set(`${row.agent}\u0000${row.call_id}`, (counted.get(`${row.agent}\u0000${row.call_id}`) ?? 0) + 1);
  for (const entry of tools) {
    if (entry.outcome === null) continue;
    const [agent, callId, occurrence] = JSON.parse(entry.key) as [string, string, number];
    if (occurrence <= (counted.get(`${agent}\u0000${callId}`) ?? 0)) continue;
    const outcome = JSON.parse(entry.outcome) as { resultStr?: string };
    rows.push({ agent, call_id: callId, result: outcome.resultStr ?? null });
  }
  return rows;
}

/**
 * The time the earlier attempts took: the recorded duration of a run that ended (it counts every attempt); else, its
 * last attempt crashed, what that attempt counted before it when it began and its own time, from its start to its
 * last recorded step (an attempt that crashed recorded no duration: one crash after another must not forget the
 * first). A record of an lllm that kept no count per attempt: the duration recorded by the last attempt that ended,
 * taken as counting all but the last attempt, and each attempt after it.
 */
function earlierDuration(run: RunRecord, tools: readonly JournalEntry[]): number {
  if (run.status !== "crashed" && run.duration_ms !== null) return run.duration_ms;
  const steps: number[] = [];
  for (const call of run.model_calls) steps.push(call.started_at + (call.latency_ms ?? 0));
  for (const call of run.tool_calls) steps.push(call.ended_at);
  for (const entry of tools) steps.push(entry.endedAt ?? entry.startedAt);
  const last = run.attempts.at(-1);
  if (last !== undefined && last.earlier_ms !== null) {
    let lastStep = last.started_at;
    for (const at of steps) if (at > lastStep) lastStep = at;
    return last.earlier_ms + lastStep - last.started_at;
  }
  // A duration is recorded when an attempt ends (the earlier ones' included): it stands for all up to the last one.
  const starts = [run.started_at, ...run.attempts.map((attempt) => attempt.started_at)];
  const counted = run.duration_ms !== null ? starts.length - 1 : 0;
  let total = run.duration_ms ?? 0;
  for (let index = counted; index < starts.length; index++) {
    const start = starts[index]!;
    const next = starts[index + 1] ?? Number.POSITIVE_INFINITY;
    let last = start;
    for (const at of steps) if (at >= start && at < next) last = Math.max(last, at);
    total += last - start;
  }
  return total;
}

/** Each call's recorded decisions, in order. */
function byCall(decisions: ReadonlyArray<{ agent: string; tool: string; args: unknown; approved: boolean }>): Map<string, boolean[]> {
  const approvals = new Map<string, boolean[]>();
  for (const { agent, tool, args, approved } of decisions) {
    const key = approvalKey(agent, tool, args);
    const list = approvals.get(key);
    if (list) list.push(approved);
    else approvals.set(key, [approved]);
  }
  return approvals;
}

function approvalKey(agent: string, tool: string, args: unknown): string {
  return `${agent}\u0000${tool}\u0000${canonicalJson(args)}`;
}

function checkedOutcome(runId: string, entry: JournalEntry): string {
  try {
    const value = JSON.parse(entry.outcome!) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return entry.outcome!;
  } catch {
    // Below.
  }
  throw damagedRecord(runId, `the recorded outcome of its call of \`${entry.name}\` (agent \`${entry.agent}\`) is not readable`);
}

function parsedArguments(runId: string, entry: JournalEntry): Record<string, unknown> {
  try {
    const value = JSON.parse(entry.arguments) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Below.
  }
  throw damagedRecord(runId, `the recorded arguments of its call of \`${entry.name}\` (agent \`${entry.agent}\`) are not readable`);
}

function sampleNotRecorded(runId: string, agent: string | undefined): SampleNotRecorded {
  return new SampleNotRecorded("resume_record_invalid", `run ${runId}: the record has no answer to a \`ctx.sample\` request of agent \`${agent ?? "?"}\` that a replayed tool call made`);
}

/** The record of a run is damaged: a resume could not tell what it did. */
export function damagedRecord(runId: string, what: string): StoreError {
  return new StoreError("resume_record_invalid", `run ${runId} cannot be resumed: its record is damaged: ${what}`, {
    hint: "Start the run again (lllm run TACTIC …); `lllm logs show ID` shows what the record still holds.",
  });
}
