import { stripFence } from "../../util/stripFence.js";
import { answerText } from "../CaseRun.js";
import { quote, type AssertionHandler, type AssertionResult } from "./AssertionHandler.js";

/** A `judge` value: a rubric, or `{rubric, model, threshold}`. */
interface JudgeSpec {
  rubric: string;
  model?: string;
  /** The lowest score that passes; default 0.5. */
  threshold?: number;
}

/** The agent name a judge's model calls are made under (and kept under in a cassette); no tactic agent has it. */
export const JUDGE_AGENT = "(judge)";

const SYSTEM = [
  "You grade the answer of an AI assistant against a rubric. Judge only what the rubric asks, strictly.",
  'Reply with one JSON object and nothing else: {"pass": true or false, "score": a number from 0 to 1, "reason": "one sentence"}.',
].join("\n");

/**
 * `judge: {rubric, model}`: a model grades the answer against the rubric. Its call goes through the same providers
 * as the tactic's, and is recorded in the case's cassette (and replayed from it) like the tactic's own calls.
 */
export const judge: AssertionHandler = async (value, { run, judgeModel, signal }) => {
  const spec: JudgeSpec = typeof value === "string" ? { rubric: value } : (value as JudgeSpec);
  const input = typeof run.input === "string" ? run.input : JSON.stringify(run.input);
  let reply: string;
  let name = spec.model ?? "the default model";
  try {
    const model = judgeModel(spec.model);
    name = model.name;
    const response = await model.generate({
      agent: JUDGE_AGENT,
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: `Rubric:\n${spec.rubric}\n\nThe user's input:\n${input}\n\nThe answer:\n${answerText(run)}` },
      ],
      responseFormat: { type: "json_object" },
      ...(signal ? { signal } : {}),
    });
    reply = response.message.content ?? "";
  } catch (error) {
    const hint = (error as { hint?: unknown }).hint;
    return { pass: false, score: 0, reason: `the judge (${name}) did not answer: ${(error as Error).message}${typeof hint === "string" ? `\n${hint}` : ""}`, broken: true };
  }
  return readGrade(reply, spec.threshold ?? 0.5);
};

/** The judge's JSON reply as a result: `score` decides against the threshold when given, else `pass`. */
function readGrade(reply: string, threshold: number): AssertionResult {
  let grade: { pass?: unknown; score?: unknown; reason?: unknown };
  try {
    grade = JSON.parse(stripFence(reply)) as typeof grade;
  } catch {
    return { pass: false, score: 0, reason: `the judge's reply is not JSON: ${quote(reply)}`, broken: true };
  }
  const score = typeof grade.score === "number" && grade.score >= 0 && grade.score <= 1 ? grade.score : grade.pass === true ? 1 : 0;
  const pass = typeof grade.score === "number" ? score >= threshold : grade.pass === true;
  const reason = typeof grade.reason === "string" && grade.reason !== "" ? grade.reason : "the judge gave no reason";
  return { pass, score, reason: `judge (score ${score}): ${reason}` };
}
