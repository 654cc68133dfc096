import { yaml } from "../util/lazyYaml.js";
import { canonicalJson } from "../util/canonicalJson.js";
import { parseArguments, replyMessages } from "../providers/scriptedRequest.js";
import type { ScriptedMessage, ScriptedTurn } from "../providers/ScriptedTurn.js";
import type { ModelCallRecord, RunRecord, StoredMessage, ToolCallStoredRecord } from "./RunRecord.js";

/** What a script is made of: a run's model calls (each with every message it was sent) and its tool calls' results. */
export interface ReplaySource {
  model_calls: ReadonlyArray<Pick<ModelCallRecord, "agent" | "messages" | "tools" | "reply" | "tool_calls" | "prompt_tokens" | "completion_tokens" | "finish_reason"> & Partial<Pick<ModelCallRecord, "model" | "cached_prompt_tokens" | "reasoning_tokens" | "cache_write_prompt_tokens" | "batch" | "carry">>>;
  tool_calls: ReadonlyArray<Pick<ToolCallStoredRecord, "agent" | "call_id" | "result">>;
}

/**
 * A `scripted:` model file of a run's model turns, by agent: each agent's turns in its own order, so that a run of
 * several agents (nested tactics, agents running at once) replays whatever the order across them.
 */
export function toReplayScript(run: RunRecord): string {
  const header = [
    `# The model's turns of run ${run.id} (${run.tactic_name ?? "?"}), by agent, written by \`lllm logs replay\`.`,
    `# Replay offline, the tools running for real:`,
    `#   lllm run ${run.tactic_path ?? "TACTIC"} --model scripted:THIS_FILE --input ...`,
    `# Each turn keeps what the model was sent (\`request\`, or what was \`added\` after the turn above and its tool`,
    `# results): a replay whose run would now send something else stops with a diff of the change.`,
  ].join("\n");
  return `${header}\n${yaml.stringify({ run: run.id, input: run.input, agents: toReplayTurns(run) }, { lineWidth: 0 })}`;
}

/**
 * Each agent's turns, in the order its model calls answered. A turn records the request it answered: whole
 * (`request`) when it starts a dialog, else only what was `added` after the turn above, its reply and its tool
 * results; and the tools `offered` when they change. Tool calls keep their id and the result the run got. With
 * `journal` (a resumed run replays its own record), each turn also keeps the model that answered and its whole
 * usage, so that the replayed answer counts and costs what it did.
 */
export function toReplayTurns(run: ReplaySource, options: { journal?: boolean } = {}): Record<string, ScriptedTurn[]> {
  // By agent and call id, in order: ids are unique only within an agent's dialog (a scripted run repeats them).
  const results = new Map<string, Array<string | null>>();
  for (const call of run.tool_calls) {
    const key = `${call.agent}\u0000${call.call_id}`;
    results.set(key, [...(results.get(key) ?? []), call.result]);
  }
  const agents: Record<string, ScriptedTurn[]> = {};
  const previous = new Map<string, { sent: ScriptedMessage[]; turn: ScriptedTurn; offered: readonly string[] }>();
  // A message stored once is one object in every call that sent it (see `RunStore.getRun`): converted once, and
  // compared by identity first (a 100-round run would otherwise compare its whole dialog at every turn).
  const converted = new Map<StoredMessage, ScriptedMessage>();
  const convert = (message: StoredMessage): ScriptedMessage => {
    let scripted = converted.get(message);
    if (!scripted) converted.set(message, (scripted = fromStoredMessage(message)));
    return scripted;
  };
  for (const call of run.model_calls) {
    const sent = call.messages.map(convert);
    const turn: Exclude<ScriptedTurn, string> = {};
    const before = previous.get(call.agent);
    const reply = before ? replyMessages(before.turn) : [];
    // What this call was sent after the turn above: that turn's request, its reply and tool results, then more.
    if (before && startsWith(sent, before.sent, reply)) {
      const implied = before.sent.length + reply.length;
      if (sent.length > implied) turn.added = sent.slice(implied);
    } else turn.request = sent;
    if (turn.request || !before || !sameNames(before.offered, call.tools)) turn.offered = [...call.tools];
    if (call.reply) turn.text = call.reply;
    if (call.tool_calls.length > 0) {
      turn.tool_calls = call.tool_calls.map((request) => {
        const result = results.get(`${call.agent}\u0000${request.id}`)?.shift();
        return { id: request.id, name: request.name, arguments: parseArguments(request.arguments), ...(typeof result === "string" ? { result } : {}) };
      });
    }
    if (turn.text === undefined && turn.tool_calls === undefined) turn.text = "";
    if (call.finish_reason === "length" || call.finish_reason === "content_filter") turn.finish_reason = call.finish_reason;
    turn.usage = { prompt_tokens: call.prompt_tokens, completion_tokens: call.completion_tokens };
    if (options.journal) {
      if (call.cached_prompt_tokens) turn.usage.cached_prompt_tokens = call.cached_prompt_tokens;
      if (call.reasoning_tokens) turn.usage.reasoning_tokens = call.reasoning_tokens;
      if (call.cache_write_prompt_tokens) turn.usage.cache_write_prompt_tokens = call.cache_write_prompt_tokens;
      if (call.batch) turn.usage.batch = true;
      if (call.model) turn.model = call.model;
      if (call.carry) turn.carry = call.carry;
    }
    (agents[call.agent] ??= []).push(turn);
    previous.set(call.agent, { sent, turn, offered: call.tools });
  }
  return agents;
}

function fromStoredMessage(message: StoredMessage): ScriptedMessage {
  const role = message.role as ScriptedMessage["role"];
  if (role === "tool") return { role, ...(message.toolCallId !== undefined ? { tool_call_id: message.toolCallId } : {}), ...(message.name !== undefined ? { name: message.name } : {}), content: message.content };
  if (role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    return { role, content: message.content === "" ? null : message.content, tool_calls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: parseArguments(call.arguments) })) };
  }
  return { role, content: message.content };
}

/** Whether `messages` starts with `start` followed by `then` (compared in place: a 100-round run has 100 turns). */
function startsWith(messages: readonly ScriptedMessage[], start: readonly ScriptedMessage[], then: readonly ScriptedMessage[]): boolean {
  if (start.length + then.length > messages.length) return false;
  for (let index = 0; index < start.length; index += 1) if (!sameScripted(start[index]!, messages[index]!)) return false;
  for (let index = 0; index < then.length; index += 1) if (!sameScripted(then[index]!, messages[start.length + index]!)) return false;
  return true;
}

/** Two messages alike as the model reads them (an assistant's empty text is `null`, as the loop sends it beside tool calls). */
function sameScripted(a: ScriptedMessage, b: ScriptedMessage): boolean {
  if (a === b) return true;
  if (a.role !== b.role || a.tool_call_id !== b.tool_call_id || a.name !== b.name) return false;
  const empty = (message: ScriptedMessage): string | null => (message.role === "assistant" && message.content === "" ? null : message.content);
  if (empty(a) !== empty(b)) return false;
  const callsA = a.tool_calls ?? [];
  const callsB = b.tool_calls ?? [];
  if (callsA.length !== callsB.length) return false;
  // Arguments parsed from the same stored text have their keys in the same order; others are compared canonically.
  return callsA.every((call, index) => {
    const other = callsB[index]!;
    return call.id === other.id && call.name === other.name && (JSON.stringify(call.arguments) === JSON.stringify(other.arguments) || comparable(a) === comparable(b));
  });
}

/** A message as compared: an assistant's empty text is `null`, as the loop sends it beside tool calls. */
function comparable(message: ScriptedMessage): string {
  return canonicalJson({ ...message, content: message.role === "assistant" && message.content === "" ? null : message.content });
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}
