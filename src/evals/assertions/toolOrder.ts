import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `tool-order: [a, b]`: the run called these tools in this order (other calls may come between and around them). */
export const toolOrder: AssertionHandler = (value, { run }) => {
  const wanted = value as string[];
  const names = run.toolCalls.map((call) => call.name);
  let next = 0;
  for (const name of names) if (name === wanted[next]) next += 1;
  const pass = next >= wanted.length;
  const order = names.length > 0 ? names.join(" → ") : "no tool was called";
  return verdict(pass, pass ? `the calls are in order: ${order}` : `the calls are not in the order ${wanted.join(" → ")}: ${order}${names.length > 0 ? ` (missing from \`${wanted[next]}\` on)` : ""}`, { expected: wanted.join(" → "), actual: order });
};
