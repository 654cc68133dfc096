import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `max-tokens: n`: at most n tokens, prompt and completion together. */
export const maxTokens: AssertionHandler = (value, { run }) => {
  const limit = value as number;
  const used = run.usage.totalTokens;
  return verdict(used <= limit, `${used} tokens (at most ${limit})`, { expected: `at most ${limit}`, actual: String(used) });
};
