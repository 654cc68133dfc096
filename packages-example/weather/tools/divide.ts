import { tool } from "lllm";

/** Throws on zero: the model reads back `Error: Division by zero` and can try again. */
export const divide = tool({
  name: "divide",
  description: "Divide two numbers",
  parameters: { a: { type: "number" }, b: { type: "number" } },
  run: ({ a, b }) => {
    if (b === 0) throw new Error("Division by zero");
    return String(Number(a) / Number(b));
  },
});
