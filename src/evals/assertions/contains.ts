import { answerText } from "../CaseRun.js";
import { quote, verdict, type AssertionHandler } from "./AssertionHandler.js";

/** `contains: text`: the answer contains the text (case-sensitive). */
export const contains: AssertionHandler = (value, { run }) => {
  const text = answerText(run);
  const wanted = value as string;
  const found = text.includes(wanted);
  return verdict(found, `the answer ${found ? "contains" : "does not contain"} ${quote(wanted)}`, { expected: `contains ${quote(wanted)}`, actual: text });
};
