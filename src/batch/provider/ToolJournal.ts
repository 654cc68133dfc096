import { FunctionCall, FunctionTool, type ToolContext } from "../../tools/index.js";
import type { ToolCallOptions } from "../../tools/FunctionTool.js";
import { asToolResult, toolResult } from "../../tools/toolResult.js";

/** Where the outcomes are kept: the batch's job store (`BatchJobStore.toolResultsOf` / `keepToolResult`). */
export interface ToolResults {
  /** The kept outcomes of an item's calls, by key (one read for the attempt, not one per call). */
  toolResultsOf(itemKey: string): ReadonlyMap<string, string>;
  keepToolResult(key: string, outcome: string): void;
}

/** A call's outcome as kept: what `FunctionTool.call` filled in. */
interface KeptOutcome {
  /** Model turns the call made (a tool that asks the agent's model, `ctx.sample`): skipped on replay, as the call is. */
  turns?: number;
  resultStr?: string;
  error?: string;
  result?: unknown;
  /** `result` was a rich result (`toolResult`): it is made one again, so that its images still reach the model. */
  rich?: true;
}

/**
 * The tool calls of one attempt of a batch item, kept by item, agent, call id and occurrence: an item waiting for a
 * provider batch job is not kept as a suspended run but run again from its start when its answer comes, and its
 * model's answered turns come back in the same order, with the same call ids. Its tools must not run twice (they
 * may change things, cost money, or answer differently): the first attempt keeps each call's outcome, later ones
 * read it back. An outcome of a call the run's stop cut short (a Ctrl-C) is not kept.
 */
export class ToolJournal {
  readonly #results: ToolResults;
  readonly #itemKey: string;
  /** How many times this attempt saw each agent and call id (a scripted model may repeat an id). */
  readonly #seen = new Map<string, number>();
  /** The outcomes kept by earlier attempts. */
  #kept: ReadonlyMap<string, string> | undefined;

  /** The item's model turns so far (the turn counter of its models): read around a call, moved on at a replay. */
  readonly #turns: { count: number };

  /** `kept`: the item's kept outcomes when the caller read them already (see `ItemHistory`); else read at the first call. */
  constructor(results: ToolResults, itemKey: string, turns: { count: number }, kept?: ReadonlyMap<string, string>) {
    this.#results = results;
    this.#itemKey = itemKey;
    this.#turns = turns;
    this.#kept = kept;
  }

  /** The tool, its calls kept (a declaration, which cannot run, is left as it is). */
  wrap(tool: FunctionTool, agent: string): FunctionTool {
    if (tool.isDeclaration) return tool;
    return new JournaledTool(tool, (call, context, options) => this.#call(tool, agent, call, context, options));
  }

  async #call(tool: FunctionTool, agent: string, call: FunctionCall, context: ToolContext, options: ToolCallOptions): Promise<FunctionCall> {
    const key = this.#keyOf(agent, call.id);
    this.#kept ??= this.#results.toolResultsOf(this.#itemKey);
    const kept = this.#kept.get(key);
    if (kept !== undefined) {
      const outcome = JSON.parse(kept) as KeptOutcome;
      this.#turns.count += outcome.turns ?? 0;
      return replay(call, outcome);
    }
    const before = this.#turns.count;
    // The tool itself runs the call: its argument validator is compiled once, not once per attempt.
    const done = await tool.call(call, context, options);
    if (!context.signal?.aborted) this.#results.keepToolResult(key, JSON.stringify(outcomeOf(done, this.#turns.count - before)));
    return done;
  }

  /** `<item key>/["agent","call id",n]`: no NUL (libsql cuts a text at one), and one range of keys per item. */
  #keyOf(agent: string, callId: string): string {
    const seen = JSON.stringify([agent, callId]);
    const count = (this.#seen.get(seen) ?? 0) + 1;
    this.#seen.set(seen, count);
    return `${this.#itemKey}/${JSON.stringify([agent, callId, count])}`;
  }

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

function outcomeOf(call: FunctionCall, turns: number): KeptOutcome {
  const outcome: KeptOutcome = turns > 0 ? { turns } : {};
  if (call.resultStr !== undefined) outcome.resultStr = call.resultStr;
  if (call.error !== undefined) outcome.error = call.error;
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

function replay(call: FunctionCall, kept: KeptOutcome): FunctionCall {
  delete call.result;
  delete call.resultStr;
  delete call.error;
  if (kept.result !== undefined) call.result = kept.rich ? toolResult(kept.result as Parameters<typeof toolResult>[0]) : kept.result;
  if (kept.resultStr !== undefined) call.resultStr = kept.resultStr;
  if (kept.error !== undefined) call.error = kept.error;
  return call;
}
