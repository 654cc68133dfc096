import { canonicalJson } from "../../util/canonicalJson.js";
import { answerText } from "../CaseRun.js";
import { verdict, type AssertionHandler } from "./AssertionHandler.js";

/**
 * `equals: text`: the answer is exactly the text, surrounding whitespace aside. An answer that is JSON (a tactic
 * with an `output` schema) is compared as a JSON value when the text is JSON, so key order does not matter.
 */
export const equals: AssertionHandler = (value, { run }) => {
  const wanted = String(value);
  if (typeof run.output !== "string" && run.output !== null && run.output !== undefined) {
    const parsed = parseJson(wanted);
    if (parsed.ok) {
      const same = canonicalJson(parsed.value) === canonicalJson(run.output);
      return verdict(same, same ? "the answer equals the expected JSON" : "the answer is not the expected JSON", { expected: JSON.stringify(parsed.value, null, 2), actual: JSON.stringify(run.output, null, 2) });
    }
  }
  const text = answerText(run);
  const same = text.trim() === wanted.trim();
  return verdict(same, same ? "the answer equals the expected text" : "the answer is not the expected text", { expected: wanted.trim(), actual: text.trim() });
};

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
