import { answerText } from "../CaseRun.js";
import { quote, verdict, type AssertionHandler } from "./AssertionHandler.js";
import { parseRegex } from "./parseRegex.js";

/** `regex: pattern` (or `/pattern/flags`): the answer matches the regular expression. */
export const regex: AssertionHandler = (value, { run }) => {
  const parsed = parseRegex(value as string);
  if (!parsed.ok) return { pass: false, score: 0, reason: `the regex does not compile: ${parsed.reason}`, broken: true };
  const text = answerText(run);
  const match = parsed.regex.exec(text);
  return verdict(match !== null, match ? `the answer matches ${String(parsed.regex)} (at ${quote(match[0], 60)})` : `the answer does not match ${String(parsed.regex)}`, { expected: `matches ${String(parsed.regex)}`, actual: text });
};
