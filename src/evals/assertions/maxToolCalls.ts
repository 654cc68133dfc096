import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `max-tool-calls: n`: at most n tool calls. */
export const maxToolCalls: AssertionHandler = (value, { run }) => {
  const limit = value as number;
  const count = run.toolCalls.length;
  return verdict(count <= limit, `${count} tool call${count === 1 ? "" : "s"} (at most ${limit})`, { expected: `at most ${limit}`, actual: String(count) });
};
