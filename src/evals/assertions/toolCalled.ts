import { canonicalJson } from "../../util/canonicalJson.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import type { CaseToolCall } from "../CaseRun.js";
import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** A `tool-called` value: a tool name, or `{name, args}` where `args` is a subset the call's arguments must have. */
interface WantedCall {
  name: string;
  args?: Record<string, unknown>;
}

/** `tool-called: name | {name, args}`: some call of the run was to this tool, with these arguments among its own. */
export const toolCalled: AssertionHandler = (value, { run }) => {
  const wanted = wantedCall(value);
  const match = run.toolCalls.find((call) => matches(call, wanted));
  const what = describeWanted(wanted);
  if (match) return verdict(true, `${what} was called${wanted.args ? `: ${describeCall(match)}` : ""}`);
  return verdict(false, `${what} was not called; ${describeCalls(run.toolCalls)}`, { expected: what, actual: describeCalls(run.toolCalls) });
};

export function wantedCall(value: unknown): WantedCall {
  return typeof value === "string" ? { name: value } : (value as WantedCall);
}

function matches(call: CaseToolCall, wanted: WantedCall): boolean {
  return call.name === wanted.name && (wanted.args === undefined || isSubset(wanted.args, call.arguments));
}

/** Every key of `subset` is in `value` with an equal value; objects are compared key by key, recursively. */
function isSubset(subset: unknown, value: unknown): boolean {
  if (isPlainObject(subset) && isPlainObject(value)) return Object.entries(subset).every(([key, item]) => Object.hasOwn(value, key) && isSubset(item, value[key]));
  return canonicalJson(subset) === canonicalJson(value);
}

function describeWanted(wanted: WantedCall): string {
  return wanted.args ? `${wanted.name} with ${JSON.stringify(wanted.args)}` : wanted.name;
}

function describeCall(call: CaseToolCall): string {
  return `${call.name}(${JSON.stringify(call.arguments)})`;
}

/** "the calls were: get_weather({"city":"Paris"}), …" or "no tool was called". */
export function describeCalls(calls: readonly CaseToolCall[]): string {
  if (calls.length === 0) return "no tool was called";
  const shown = calls.slice(0, 8).map(describeCall);
  return `the calls were: ${shown.join(", ")}${calls.length > shown.length ? `, … (${calls.length} in all)` : ""}`;
}
