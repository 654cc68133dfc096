import type { AssertionResult, AssertionHandler } from "./AssertionHandler.js";
import { toolCalled } from "./toolCalled.js";

/** `tool-not-called: name | {name, args}`: no call matched (the negation of `tool-called`, with its reason). */
export const toolNotCalled: AssertionHandler = (value, context) => {
  const called = toolCalled(value, context) as AssertionResult;
  return { ...called, pass: !called.pass, score: 1 - called.score };
};
