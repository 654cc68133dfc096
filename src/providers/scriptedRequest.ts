import { canonicalJson } from "../util/canonicalJson.js";
import type { ModelMessage, ModelRequest } from "./Model.js";
import type { ScriptedMessage, ScriptedTurn } from "./ScriptedTurn.js";

/** The request a recorded turn answered: its messages and, when recorded, the names of the tools offered. */
export interface ExpectedRequest {
  messages: readonly ScriptedMessage[];
  offered: readonly string[] | undefined;
}

/** What differs first between a recorded request and the one the model would be sent now. */
export type RequestDifference =
  | { kind: "message"; index: number; recorded: ScriptedMessage | undefined; now: ScriptedMessage | undefined }
  | { kind: "offered"; recorded: readonly string[]; now: readonly string[] };

/** Text a store or a cassette replaced a secret with: it matches any text in a recorded request. */
const REDACTED = "[redacted]";

/**
 * The request each turn of one agent's list answered, as far as the script recorded it. A turn with `request`
 * starts anew; a later turn continues the one above it: that turn's request, its reply and its tool results, then
 * `added`. A turn with nothing recorded above it (a hand-written script, or one written before requests were
 * recorded) has none: it is replayed in order, unchecked.
 */
export function expectedRequests(turns: readonly ScriptedTurn[]): Array<ExpectedRequest | undefined> {
  const expected: Array<ExpectedRequest | undefined> = [];
  let previous: { request: ExpectedRequest; turn: ScriptedTurn } | undefined;
  for (const turn of turns) {
    const spec = typeof turn === "string" ? { text: turn } : turn;
    let current: ExpectedRequest | undefined;
    if (spec.request) current = { messages: spec.request, offered: spec.offered };
    else if (previous) current = { messages: [...previous.request.messages, ...replyMessages(previous.turn), ...(spec.added ?? [])], offered: spec.offered ?? previous.request.offered };
    expected.push(current);
    previous = current ? { request: current, turn } : undefined;
  }
  return expected;
}

/**
 * The messages a turn's reply adds to the dialog as the run loop sends it back: the assistant's message, then one
 * tool message per call with the result recorded for it (calls without one add nothing).
 */
export function replyMessages(turn: ScriptedTurn): ScriptedMessage[] {
  const spec = typeof turn === "string" ? { text: turn } : turn;
  const calls = spec.tool_calls ?? [];
  if (calls.length === 0) return [{ role: "assistant", content: spec.text ?? "" }];
  const messages: ScriptedMessage[] = [{ role: "assistant", content: spec.text || null, tool_calls: calls.map((call) => ({ id: call.id ?? "", name: call.name, arguments: call.arguments ?? {} })) }];
  for (const call of calls) if (call.result !== undefined) messages.push({ role: "tool", tool_call_id: call.id ?? "", name: call.name, content: call.result });
  return messages;
}

/** A message as sent to a model, in a script's form. */
export function toScriptedMessage(message: ModelMessage): ScriptedMessage {
  if (message.role === "tool") return { role: "tool", tool_call_id: message.toolCallId, ...(message.name !== undefined ? { name: message.name } : {}), content: message.content };
  if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    return { role: "assistant", content: message.content, tool_calls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: parseArguments(call.arguments) })) };
  }
  return { role: message.role, content: message.content };
}

/** Arguments as an object when they are a JSON object (readable in a file), else the raw text the model sent. */
export function parseArguments(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : text;
  } catch {
    return text;
  }
}

/** The names of the tools a request offers. */
export function offeredNames(request: ModelRequest): string[] {
  return (request.tools ?? []).map((tool) => tool.function.name);
}

/**
 * The message a recorded one last matched. A dialog's messages are the same objects call after call (the loop keeps
 * them, and a recorded turn's request reuses the messages of the turn above), so a replay compares each pair once,
 * not once per later turn.
 */
const lastMatch = new WeakMap<ScriptedMessage, ModelMessage>();

/** The first difference between a recorded request and this one; `undefined` when the model would be sent the same. */
export function requestDifference(expected: ExpectedRequest, request: ModelRequest): RequestDifference | undefined {
  const { messages } = request;
  const length = Math.max(expected.messages.length, messages.length);
  for (let index = 0; index < length; index += 1) {
    const recorded = expected.messages[index];
    const now = messages[index];
    if (recorded && now && lastMatch.get(recorded) === now) continue;
    if (recorded && now && sameMessage(recorded, now)) {
      lastMatch.set(recorded, now);
      continue;
    }
    return { kind: "message", index, recorded, now: now ? toScriptedMessage(now) : undefined };
  }
  if (expected.offered) {
    const now = offeredNames(request);
    if (now.length !== expected.offered.length || now.some((name, index) => name !== expected.offered![index])) return { kind: "offered", recorded: expected.offered, now };
  }
  return undefined;
}

/** How many messages at the start of the request match the recorded ones (to pick the closest recorded turn). */
export function matchingStart(expected: ExpectedRequest, request: ModelRequest): number {
  let index = 0;
  while (index < expected.messages.length && index < request.messages.length && sameMessage(expected.messages[index]!, request.messages[index]!)) index += 1;
  return index;
}

function sameMessage(recorded: ScriptedMessage, now: ModelMessage): boolean {
  if (recorded.role !== now.role) return false;
  if (!sameContent(recorded.content, now.content, now.role === "assistant")) return false;
  if (now.role === "tool") {
    if (recorded.tool_call_id && recorded.tool_call_id !== now.toolCallId) return false;
    return recorded.name === undefined || now.name === undefined || recorded.name === now.name;
  }
  if (now.role !== "assistant") return true;
  const recordedCalls = recorded.tool_calls ?? [];
  const calls = now.toolCalls ?? [];
  if (recordedCalls.length !== calls.length) return false;
  return recordedCalls.every((call, index) => {
    const other = calls[index]!;
    return (call.id === "" || call.id === other.id) && call.name === other.name && sameArguments(call.arguments, other.arguments);
  });
}

/** Equal texts; an assistant's empty text and `null` are the same; `[redacted]` in the recording matches any text. */
function sameContent(recorded: string | null, now: string | null, assistant: boolean): boolean {
  if (recorded === now) return true;
  if (assistant && (recorded ?? "") === (now ?? "")) return true;
  if (recorded === null || now === null || !recorded.includes(REDACTED)) return false;
  return redactedPattern(recorded).test(now);
}

const patterns = new Map<string, RegExp>();

function redactedPattern(recorded: string): RegExp {
  let pattern = patterns.get(recorded);
  if (!pattern) {
    pattern = new RegExp(`^${recorded.split(REDACTED).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\S]+?")}$`);
    if (patterns.size > 1000) patterns.clear();
    patterns.set(recorded, pattern);
  }
  return pattern;
}

/** Arguments compare as JSON values (a recorded `{"city": "Paris"}` is sent again as `{"city":"Paris"}`). */
function sameArguments(recorded: Record<string, unknown> | string, now: string): boolean {
  const parsed = parseArguments(now);
  if (typeof recorded === "string" || typeof parsed === "string") return (typeof recorded === "string" ? recorded : JSON.stringify(recorded)) === now;
  return canonicalJson(recorded) === canonicalJson(parsed);
}
