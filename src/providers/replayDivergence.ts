import { ProviderError } from "../errors.js";
import { textDiff } from "../util/textDiff.js";
import type { ModelRequest } from "./Model.js";
import { matchingStart, requestDifference, toScriptedMessage, type ExpectedRequest, type RequestDifference } from "./scriptedRequest.js";
import type { ScriptedMessage } from "./ScriptedTurn.js";

/** A recorded turn not used yet: where it is in its agent's list, and the request it answered. */
export interface PendingTurn {
  /** 0-based, in the agent's list. */
  index: number;
  expected: ExpectedRequest;
}

export interface DivergenceOptions {
  /** The agent that asked (`undefined`: a script with one list for every agent). */
  agent: string | undefined;
  /** How many turns the agent's list has. */
  total: number;
  /** Its recorded turns not used yet. */
  pending: PendingTurn[];
  request: ModelRequest;
  /** What the user should do when the change is intended. */
  hint: string;
}

/**
 * The error of a replay whose run now asks the model something no recorded turn answered: it names the agent and
 * the recorded turn closest to the request (the longest run of equal messages from the start), and shows what
 * differs, as a short diff, so that the user sees the change (a tool result, a prompt, the tools offered) rather
 * than a guess.
 */
export function replayDivergence({ agent, total, pending, request, hint }: DivergenceOptions): ProviderError {
  const who = agent === undefined ? "the script" : `agent \`${agent}\``;
  let closest = pending[0]!;
  let closestStart = -1;
  for (const candidate of pending) {
    const start = matchingStart(candidate.expected, request);
    if (start > closestStart) [closest, closestStart] = [candidate, start];
  }
  const difference = requestDifference(closest.expected, request);
  const lines = difference ? describeDifference(difference, closest.expected.messages) : ["(the request differs in a way the script does not show)"];
  const turn = `${who === "the script" ? "turn" : `${who}'s turn`} ${closest.index + 1} of ${total}`;
  return new ProviderError("provider_replay_diverged", `the replay diverged at ${turn}: the model would now be sent something the recording did not ask it:\n${lines.map((line) => `    ${line}`).join("\n")}`, { hint });
}

/** The error of an agent that calls the model more often than the recording did. */
export function replayExhausted(agent: string | undefined, total: number, request: ModelRequest, hint: string): ProviderError {
  const who = agent === undefined ? "the run" : `agent \`${agent}\``;
  const last = request.messages.at(-1);
  const sent = last ? `; its request ends with ${label(toScriptedMessage(last), request.messages.length - 1, [])}: ${quote(last.content ?? "")}` : "";
  return new ProviderError("provider_script_exhausted", `the replay has no turn left: ${who} called the model once more than recorded (${total} turn${total === 1 ? "" : "s"})${sent}`, { hint });
}

function describeDifference(difference: RequestDifference, recordedMessages: readonly ScriptedMessage[]): string[] {
  if (difference.kind === "offered") {
    const added = difference.now.filter((name) => !difference.recorded.includes(name));
    const removed = difference.recorded.filter((name) => !difference.now.includes(name));
    const changes = [...added.map((name) => `+ ${name}`), ...removed.map((name) => `- ${name}`)];
    return [`the tools offered differ: recorded [${difference.recorded.join(", ")}], now [${difference.now.join(", ")}]`, ...(changes.length > 0 ? changes : ["(the same tools, in another order)"])];
  }
  const { index, recorded, now } = difference;
  if (recorded === undefined) return [`${label(now!, index, recordedMessages)} is sent now but was not recorded:`, `+ ${quote(now!.content ?? "")}`];
  if (now === undefined) return [`${label(recorded, index, recordedMessages)} was recorded but is not sent now:`, `- ${quote(recorded.content ?? "")}`];
  const head = `${label(recorded, index, recordedMessages)} differs:`;
  if (recorded.role !== now.role) return [head, `- recorded: ${recorded.role} ${quote(recorded.content ?? "")}`, `+ now:      ${now.role} ${quote(now.content ?? "")}`];
  if ((recorded.content ?? "") !== (now.content ?? "")) return [head, ...textDiff(recorded.content ?? "", now.content ?? "", { labels: ["recorded", "now"] })];
  return [head, `- recorded: ${JSON.stringify(recorded.tool_calls ?? [])}`, `+ now:      ${JSON.stringify(now.tool_calls ?? [])}`];
}

/** `message 3 (user)`, `message 4 (the result of stamp({"word":"alpha"}))`: 1-based, as people count. */
function label(message: ScriptedMessage, index: number, recordedMessages: readonly ScriptedMessage[]): string {
  if (message.role === "tool") {
    const call = recordedMessages.flatMap((entry) => entry.tool_calls ?? []).find((entry) => entry.id === message.tool_call_id);
    const name = call?.name ?? message.name ?? "a tool";
    const args = call ? (typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)) : "…";
    return `message ${index + 1} (the result of ${name}(${args}))`;
  }
  const role = message.role === "system" ? "the system prompt" : message.role === "assistant" && message.tool_calls ? "the assistant's tool calls" : message.role;
  return `message ${index + 1} (${role})`;
}

/** A text for one line of a message: quoted, cut when long. */
function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 199)}…` : text);
}
