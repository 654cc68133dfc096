import type { AssertionType } from "../TestFile.js";
import type { AssertionHandler } from "./AssertionHandler.js";
import { contains } from "./contains.js";
import { equals } from "./equals.js";
import { javascript } from "./javascript.js";
import { jsonSchema } from "./jsonSchema.js";
import { judge } from "./judge.js";
import { maxCost } from "./maxCost.js";
import { maxTokens } from "./maxTokens.js";
import { maxToolCalls } from "./maxToolCalls.js";
import { regex } from "./regex.js";
import { script } from "./script.js";
import { toolCalled } from "./toolCalled.js";
import { toolNotCalled } from "./toolNotCalled.js";
import { toolOrder } from "./toolOrder.js";

/** Every assertion type and its handler: a new type is a file and a line here (and in schemas/test.schema.json). */
export const ASSERTION_HANDLERS: Readonly<Record<AssertionType, AssertionHandler>> = {
  contains,
  equals,
  regex,
  "tool-called": toolCalled,
  "tool-not-called": toolNotCalled,
  "tool-order": toolOrder,
  "max-tool-calls": maxToolCalls,
  "max-cost": maxCost,
  "max-tokens": maxTokens,
  "json-schema": jsonSchema,
  javascript,
  script,
  judge,
};
