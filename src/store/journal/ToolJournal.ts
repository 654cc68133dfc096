import { performance } from "node:perf_hooks";
import { ConfigError, RunLimitError } from "../../errors.js";
import { FunctionCall, FunctionTool, isIdempotent, type SampleRequest, type ToolContext } from "../../tools/index.js";
import { completeToolContext } from "../../tools/localToolContext.js";
import { markSample, plainSampleRequest } from "../../tools/sampleRequest.js";
import type { ToolCallOptions } from "../../tools/FunctionTool.js";
import { recordToolFailure, toolFailureOf } from "../../tools/toolFailure.js";
import { asToolResult, toolResult } from "../../tools/toolResult.js";
import type { RerunSafety } from "../SpoolEntry.js";
import { StoreError } from "../StoreError.js";

/** A tool call about to run, as the journal notes it before it runs. */
export interface ToolStartNote {
  agent: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Why it may run again if its outcome is never kept; absent: it may not. */
  rerun?: RerunSafety;
}

/**
 * Where a journal's entries are kept: the run store (a run's journal, `lllm run --resume`) or the batch's job store
 * (`BatchJobStore`, an item waiting for a provider batch job). Each entry is kept before the run goes on.
 */
export interface ToolResults {
  /**
   * The kept entries of a scope (an item's key; "" for a run of its own), by key (one read for an attempt, not one
   * per call): outcomes, and the start notes of calls that never ended (see `startNote`).
   */
  toolResultsOf(scope: string): ReadonlyMap<string, string>;
  /**
   * Keep a call's outcome (it replaces the call's start note), kept as its JSON text (`JSON.stringify(outcome)`, what
   * `toolResultsOf` gives back). `ended`: the call itself, for a store that records it as the run's tool call too (the
   * run store: one line for both, which holds the result text once).
   */
  keepToolResult(key: string, outcome: ToolOutcome, ended?: EndedCall): void;
  /** Keep a note that a call starts, before it runs; a store that keeps none lets every call cut short run again. */
  keepToolStart?(key: string, note: ToolStartNote): void;
}

/** A journaled call that ended: its agent, the call (with its result or error), and how long it took. */
export interface EndedCall {
  agent: string;
  call: FunctionCall;
  durationMs: number;
}

/** A call's outcome as kept: what `FunctionTool.call` filled in. */
export interface ToolOutcome {
  resultStr?: string;
  error?: string;
  result?: unknown;
  /** `result` was a rich result (`toolResult`): it is made one again, so that its images still reach the model. */
  rich?: true;
  /** The call failed with an MCP server's error: its code and message (a program raises `MCPToolError` with them). */
  mcp?: { code: string; message: string };
  /** The `ctx.sample` requests the call made that were answered, in that order (see `ToolJournalOptions.keepSamples`). */
  samples?: SampleRequest[];
}

/**
 * A replayed call's kept sample request that the run's record has no answer to: never asked of a model, and not
 * counted (the call is replayed all the same).
 */
export class SampleNotRecorded extends StoreError {}

/** The value a store keeps for a call that started and has no outcome yet (see `ToolResults.keepToolStart`). */
export function startNote(note: ToolStartNote): string {
  return JSON.stringify({ unfinished: note });
}

/** The start note a kept value is, if it is one. */
function readStartNote(kept: string): ToolStartNote | undefined {
  if (!kept.startsWith('{"unfinished":')) return undefined;
  try {
    return (JSON.parse(kept) as { unfinished: ToolStartNote }).unfinished;
  } catch {
    return undefined;
  }
}

export interface ToolJournalOptions {
  results: ToolResults;
  /** The scope of the calls' keys: a batch item's key (keys `<scope>/…`); "" (default) for a run of its own. */
  scope?: string;
  /** The scope's kept entries when the caller read them already (see `ItemHistory`); else read at the first call. */
  kept?: ReadonlyMap<string, string>;
  /**
   * A tool whose work is journaled inside (`replaysInside`: a tactic or an agent used as a tool, tool_chain) runs
   * again, its calls inside answered from the journal, instead of being answered as a whole. Default false: answered
   * as a whole (the model turns it made, a `ctx.sample`, are not made again).
   */
  runInsideAgain?: boolean;
  /**
   * Whether a call cut short by an earlier attempt's stop (started, never ended) may run again though its tool
   * does not say it is safe (`--rerun-unknown`, or the user said yes). Default: no; the run stops before it.
   */
  rerunUnknown?: (call: { key: string; agent: string; name: string }) => boolean;
  /**
   * Keep with each outcome the `ctx.sample` requests the call made, and ask them again when the call is replayed,
   * through its context: a run's own journal, whose model answers them from the run's record alone, so that a resumed
   * run counts what they cost (and its budget holds it) as it counts its replayed model turns. A call cut short that
   * runs again asks its samples so that the record may answer those it asked before the stop. Default false.
   */
  keepSamples?: boolean;
}

/**
 * The tool calls of a run, kept by agent, call id and occurrence, so that the run started again from its start
 * (a run resumed after a stop, a batch item run again when its provider batch job answered) replays them instead of
 * running them twice: its model's answered turns come back in the same order, with the same call ids, and each call
 * whose outcome was kept gets that outcome. Tools may change things, cost money, or answer differently: a call runs
 * only once. A store that notes calls as they start (`keepToolStart`) lets a later attempt tell a call cut short by
 * the stop: it runs again only when its tool says it is safe (`idempotent`, or its work is journaled inside);
 * otherwise the attempt stops before it with an error naming the call. A call the run's own stop cut short (it
 * failed after a Ctrl-C, or answered the stop with a fallback) keeps no outcome; one that ended on its own after the
 * stop (its tool does not heed the signal) keeps its outcome, as any other.
 */
export class ToolJournal {
  readonly #options: ToolJournalOptions;
  /** How many times this attempt saw each agent and call id (a scripted model may repeat an id). */
  readonly #seen = new Map<string, number>();
  /** The entries kept by earlier attempts. */
  #kept: ReadonlyMap<string, string> | undefined;
  /** The calls of this attempt answered from the journal (their record is there already). */
  readonly #answered = new WeakSet<FunctionCall>();
  #replayedCalls = 0;

  constructor(options: ToolJournalOptions) {
    this.#options = options;
    this.#kept = options.kept;
  }

  /** The tool, its calls journaled (a declaration, which cannot run, is left as it is). */
  wrap(tool: FunctionTool, agent: string): FunctionTool {
    if (tool.isDeclaration) return tool;
    return new JournaledTool(tool, (call, context, options) => this.#call(tool, agent, call, context, options));
  }

  /** Whether this call (of this attempt) was answered from the journal, or is a call whose record exists already. */
  answered(call: object): boolean {
    return this.#answered.has(call as FunctionCall);
  }

  /** How many calls this attempt answered from the journal. */
  get replayedCalls(): number {
    return this.#replayedCalls;
  }

  async #call(tool: FunctionTool, agent: string, call: FunctionCall, context: ToolContext, options: ToolCallOptions): Promise<FunctionCall> {
    const key = this.#keyOf(agent, call.id);
    this.#kept ??= this.#options.results.toolResultsOf(this.#options.scope ?? "");
    const kept = this.#kept.get(key);
    const note = kept === undefined ? undefined : readStartNote(kept);
    const inside = this.#options.runInsideAgain === true && tool.replaysInside === true;
    if (kept !== undefined && note === undefined) {
      this.#answered.add(call);
      if (!inside) {
        this.#replayedCalls += 1;
        const outcome = JSON.parse(kept) as ToolOutcome;
        if (outcome.samples && context.sample) await sampleAgain(outcome.samples, context.sample);
        return replay(call, outcome);
      }
      // Its calls inside are answered from the journal as it runs again; its own outcome is kept already.
      return tool.call(call, context, options);
    }
    const rerun: RerunSafety | undefined = tool.replaysInside === true ? "replays" : isIdempotent(tool) ? "idempotent" : undefined;
    // Cut short by an earlier attempt's stop: run again only when its tool says it is safe (as declared then, or now).
    if (note !== undefined && note.rerun === undefined && rerun === undefined && !this.#options.rerunUnknown?.({ key, agent, name: tool.name })) throw unknownOutcome(agent, note);
    if (note === undefined) this.#options.results.keepToolStart?.(key, { agent, name: tool.name, arguments: call.arguments, ...(rerun ? { rerun } : {}) });
    const started = performance.now();
    const samples: SampleRequest[] = [];
    // A tool journaled inside keeps its calls' samples with them; a call cut short that runs again takes the recorded
    // answers to the samples it asked then.
    const sample = this.#options.keepSamples && !inside ? context.sample : undefined;
    const asked = completeToolContext(context, tool.name);
    // Whether the run's stop answered something the call asked lllm for (a sample that failed, a question that was
    // cancelled): its outcome may then be its answer to the stop, not its work.
    let stopAnswered = false;
    const answeredByStop = (): void => {
      if (context.signal?.aborted === true) stopAnswered = true;
    };
    const watched: ToolContext = {
      ...asked,
      sample: async (request) => {
        try {
          if (!sample) return await asked.sample(request);
          const plain = plainSampleRequest(request);
          const answer = await sample(note === undefined ? request : markSample(request, "rerun"));
          samples.push(plain);
          return answer;
        } catch (error) {
          answeredByStop();
          throw error;
        }
      },
      elicit: async (request) => {
        try {
          const answer = await asked.elicit(request);
          if (answer.action === "cancel") answeredByStop();
          return answer;
        } catch (error) {
          answeredByStop();
          throw error;
        }
      },
    };
    // The tool itself runs the call: its argument validator is compiled once, not once per attempt.
    const done = await tool.call(call, watched, options);
    // A call the run's stop may have cut short keeps its start note only: its outcome is unknown, and a resume runs it
    // again only when that is safe. That is a call that failed once the run was stopped (a tool that heeded its
    // signal, a command killed), or one that ended after the stop answered its sample or its question (a fallback,
    // "cancelled"): a limit reached by a call beside it stops the run without asking this one to stop early, so only
    // its failure counts then. A call that ended with a result of its own after the stop (a tool that does not heed
    // its signal, which the run waits for) is whole: kept before the run goes on, a resume replays it.
    const aborted = context.signal?.aborted === true;
    const cutShort = aborted && (done.error !== undefined || (stopAnswered && !(context.signal?.reason instanceof RunLimitError)));
    if (!cutShort) this.#options.results.keepToolResult(key, outcomeOf(done, samples), { agent, call: done, durationMs: performance.now() - started });
    return done;
  }

  /** `["agent","call id",n]` (after `<scope>/`): no NUL (libsql cuts a text at one), and one range of keys per scope. */
  #keyOf(agent: string, callId: string): string {
    const seen = JSON.stringify([agent, callId]);
    const count = (this.#seen.get(seen) ?? 0) + 1;
    this.#seen.set(seen, count);
    const scope = this.#options.scope ?? "";
    return `${scope === "" ? "" : `${scope}/`}${JSON.stringify([agent, callId, count])}`;
  }
}

/** The calls of a journal that started and never ended (the run stopped during them), with their notes. */
export function unfinishedCalls(kept: ReadonlyMap<string, string>): Array<{ key: string; note: ToolStartNote }> {
  const found: Array<{ key: string; note: ToolStartNote }> = [];
  for (const [key, value] of kept) {
    const note = readStartNote(value);
    if (note) found.push({ key, note });
  }
  return found;
}

/** The error of a call cut short whose tool does not say it may run again. */
export function unknownOutcome(agent: string, note: ToolStartNote): ConfigError {
  return new ConfigError("resume_unknown_call", `the run stopped during a call of \`${note.name}\` (agent \`${agent}\`, arguments ${oneLine(JSON.stringify(note.arguments))}) and its outcome was never recorded: it may have done its work, or part of it; it is not run again`, {
    hint: `If running it again is safe, resume with --rerun-unknown, or declare the tool \`idempotent: true\`; otherwise check what it did first.`,
  });
}

function oneLine(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * A copy of a tool whose calls go through a journal. One class for every copy (a class made per wrap costs more
 * than the replayed call it wraps).
 */
class JournaledTool extends FunctionTool {
  readonly #call: (call: FunctionCall, context: ToolContext, options: ToolCallOptions) => Promise<FunctionCall>;

  constructor(tool: FunctionTool, call: (call: FunctionCall, context: ToolContext, options: ToolCallOptions) => Promise<FunctionCall>) {
    super({ ...tool });
    this.#call = call;
  }

  override call(call: FunctionCall, context: ToolContext = {}, options: ToolCallOptions = {}): Promise<FunctionCall> {
    return this.#call(call, context, options);
  }
}

/**
 * Ask a replayed call's kept sample requests again, in order, to be answered from the record. One the record has no
 * answer to is left out; a limit reached or a stop fails the call, as it would have failed the sample.
 */
async function sampleAgain(samples: readonly SampleRequest[], sample: NonNullable<ToolContext["sample"]>): Promise<void> {
  for (const request of samples) {
    try {
      await sample(markSample(request, "replay"));
    } catch (error) {
      if (!(error instanceof SampleNotRecorded)) throw error;
    }
  }
}

function outcomeOf(call: FunctionCall, samples: SampleRequest[]): ToolOutcome {
  const outcome: ToolOutcome = {};
  if (samples.length > 0) outcome.samples = samples;
  if (call.resultStr !== undefined) outcome.resultStr = call.resultStr;
  if (call.error !== undefined) {
    outcome.error = call.error;
    const thrown = toolFailureOf(call)?.error as { mcpCode?: unknown; mcpMessage?: unknown } | undefined;
    if (typeof thrown?.mcpCode === "string" && typeof thrown.mcpMessage === "string") outcome.mcp = { code: thrown.mcpCode, message: thrown.mcpMessage };
  }
  if (call.result !== undefined) {
    // What cannot be JSON (a function, a cycle) is left out: the model reads `resultStr`, which is kept.
    try {
      outcome.result = JSON.parse(JSON.stringify(call.result)) as unknown;
      if (asToolResult(call.result)) outcome.rich = true;
    } catch {
      delete outcome.result;
    }
  }
  return outcome;
}

function replay(call: FunctionCall, kept: ToolOutcome): FunctionCall {
  delete call.result;
  delete call.resultStr;
  delete call.error;
  if (kept.result !== undefined) call.result = kept.rich ? toolResult(kept.result as Parameters<typeof toolResult>[0]) : kept.result;
  if (kept.resultStr !== undefined) call.resultStr = kept.resultStr;
  if (kept.error !== undefined) call.error = kept.error;
  if (kept.mcp) recordToolFailure(call, { mcpCode: kept.mcp.code, mcpMessage: kept.mcp.message });
  return call;
}
