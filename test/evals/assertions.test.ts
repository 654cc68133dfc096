import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CaseRun } from "../../src/evals/CaseRun.js";
import { checkAssertion } from "../../src/evals/checkAssertion.js";
import type { AssertionSpec, AssertionType } from "../../src/evals/TestFile.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { isRunning, waitUntil } from "../helpers/processTree.js";
import { tempDir } from "../helpers/tempTree.js";
import { registerSecret } from "../../src/util/redact.js";

/** The run every assertion below is checked against: two tool calls, a short answer, a known cost. */
const run: CaseRun = {
  input: "What is the weather in Paris and Tokyo?",
  output: "Sunny, 22 degrees in Paris. Rain, 18 degrees in Tokyo.",
  toolCalls: [
    { agent: "bot", name: "get_weather", arguments: { city: "Paris", unit: "celsius" }, result: "Sunny, 22", error: null },
    { agent: "bot", name: "get_weather", arguments: { city: "Tokyo", unit: "celsius" }, result: "Rain, 18", error: null },
    { agent: "bot", name: "to_fahrenheit", arguments: { celsius: 22 }, result: "71.6", error: null },
  ],
  usage: { promptTokens: 900, completionTokens: 100, totalTokens: 1000, llmCalls: 2 },
  cost: 0.0004,
  durationMs: 12,
  error: null,
  runId: "01TEST",
};

const folder = tempDir("lllm-assertions-");

function spec(type: AssertionType, value: unknown, extra: Partial<AssertionSpec> = {}): AssertionSpec {
  return { type, value, negate: false, weight: 1, timeoutMs: 20_000, label: `${type}: ${JSON.stringify(value)}`, location: { file: "t.test.yaml" }, ...extra };
}

const judgeNever = (): never => {
  throw new Error("no judge in this test");
};

async function check(type: AssertionType, value: unknown, extra: Partial<AssertionSpec> = {}, on: CaseRun = run, judgeModel: (model: string | undefined) => ScriptedModel = judgeNever) {
  return checkAssertion(spec(type, value, extra), { run: on, folder, judgeModel });
}

describe("every assertion type passes and fails, with a reason", () => {
  it.each([
    ["contains", "Tokyo", "Berlin", 'the answer contains "Tokyo"', 'the answer does not contain "Berlin"'],
    ["equals", "Sunny, 22 degrees in Paris. Rain, 18 degrees in Tokyo.  ", "Sunny.", "the answer equals the expected text", "the answer is not the expected text"],
    ["regex", "\\d+ degrees", "/snow/i", "the answer matches /\\d+ degrees/", "the answer does not match /snow/i"],
    ["tool-called", { name: "get_weather", args: { city: "Tokyo" } }, { name: "get_weather", args: { city: "Oslo" } }, 'get_weather with {"city":"Tokyo"} was called', 'get_weather with {"city":"Oslo"} was not called; the calls were: get_weather({"city":"Paris","unit":"celsius"})'],
    ["tool-not-called", "delete_everything", "to_fahrenheit", "delete_everything was not called", "to_fahrenheit was called"],
    ["tool-order", ["get_weather", "to_fahrenheit"], ["to_fahrenheit", "get_weather"], "the calls are in order: get_weather → get_weather → to_fahrenheit", "the calls are not in the order to_fahrenheit → get_weather"],
    ["max-tool-calls", 3, 2, "3 tool calls (at most 3)", "3 tool calls (at most 2)"],
    ["max-cost", 0.001, 0.0001, "cost $0.00040 (at most $0.001)", "cost $0.00040 (at most $0.0001)"],
    ["max-tokens", 1000, 999, "1000 tokens (at most 1000)", "1000 tokens (at most 999)"],
  ] as const)("%s", async (type, passing, failing, passReason, failReason) => {
    const pass = await check(type, passing);
    expect(pass).toMatchObject({ pass: true, score: 1 });
    expect(pass.reason).toContain(passReason);
    const fail = await check(type, failing);
    expect(fail).toMatchObject({ pass: false, score: 0 });
    expect(fail.reason).toContain(failReason);
  });

  it("json-schema: the answer parsed as JSON (a fenced one too), against the schema", async () => {
    const json: CaseRun = { ...run, output: '```json\n{"summary": "sunny", "cities": 2}\n```' };
    expect(await check("json-schema", { type: "object", required: ["summary"] }, {}, json)).toMatchObject({ pass: true });
    const missing = await check("json-schema", { type: "object", required: ["summary", "temperature"] }, {}, json);
    expect(missing).toMatchObject({ pass: false });
    expect(missing.reason).toContain("must have required property 'temperature'");
    const notJson = await check("json-schema", { type: "object" });
    expect(notJson).toMatchObject({ pass: false });
    expect(notJson.reason).toContain("the answer is not JSON");
    // An object answer (a tactic with an `output` schema) is checked as it is, and left as it was.
    const object: CaseRun = { ...run, output: { summary: "sunny" } };
    expect(await check("json-schema", { type: "object", properties: { extra: { default: 1 } } }, {}, object)).toMatchObject({ pass: true });
    expect(object.output).toEqual({ summary: "sunny" });
  });

  it("equals compares a JSON answer as JSON, whatever the key order", async () => {
    const object: CaseRun = { ...run, output: { b: 2, a: [1, { c: 3 }] } };
    expect(await check("equals", '{"a": [1, {"c": 3}], "b": 2}', {}, object)).toMatchObject({ pass: true });
    expect(await check("equals", '{"a": [1], "b": 2}', {}, object)).toMatchObject({ pass: false, reason: "the answer is not the expected JSON" });
  });

  it("max-cost fails when the cost is unknown (a model without a price)", async () => {
    const result = await check("max-cost", 1, {}, { ...run, cost: null });
    expect(result).toMatchObject({ pass: false });
    expect(result.reason).toContain("the cost is unknown");
  });
});

describe("negation and weight, handled once for every type", () => {
  it("not-<type> and not: flip the outcome and keep the fact as the reason", async () => {
    expect(await check("contains", "error", { negate: true })).toMatchObject({ pass: true, reason: 'the answer does not contain "error"' });
    expect(await check("contains", "Paris", { negate: true })).toMatchObject({ pass: false, score: 0, reason: 'the answer contains "Paris"', expected: 'not contains "Paris"' });
    expect(await check("max-tool-calls", 1, { negate: true })).toMatchObject({ pass: true });
  });

  it("a check that could not decide fails even when negated", async () => {
    const thrown = await check("javascript", "./missing-check.ts", { negate: true });
    expect(thrown).toMatchObject({ pass: false, broken: true });
  });
});

describe("javascript checks run in a process of their own", { timeout: 120_000 }, () => {
  const write = (name: string, code: string): string => {
    writeFileSync(path.join(folder, name), code);
    return `./${name}`;
  };

  it("true passes; false and a string (the reason) fail; {pass, score, reason} is taken as it is; TypeScript loads", async () => {
    const short = write("short.ts", "export default (result: { output: string; tool_calls: unknown[] }): boolean | string => result.output.length < 100 || `too long: ${result.output.length}`;\n");
    expect(await check("javascript", short)).toMatchObject({ pass: true, reason: "short.ts returned true" });
    const long = write("long.ts", "export default (result: { output: string }) => result.output.length < 10 || `the answer is ${result.output.length} characters long`;\n");
    expect(await check("javascript", long)).toMatchObject({ pass: false, reason: "the answer is 54 characters long" });
    const scored = write("scored.mjs", "export default (result) => ({ pass: result.tool_calls.length === 3, score: 0.75, reason: 'three calls' });\n");
    expect(await check("javascript", scored)).toMatchObject({ pass: true, score: 0.75, reason: "three calls" });
    const no = write("no.mjs", "export default () => false;\n");
    expect(await check("javascript", no)).toMatchObject({ pass: false, reason: "no.mjs returned false" });
    expect(await check("javascript", no, { negate: true })).toMatchObject({ pass: true });
  });

  it("a check that throws, exits, hangs or returns nonsense fails its assertion with the reason, and the test process goes on", async () => {
    const throws = await check("javascript", write("throws.mjs", "export default () => { throw new Error('boom in the check'); };\n"));
    expect(throws).toMatchObject({ pass: false, broken: true, reason: "throws.mjs: the check threw: boom in the check" });
    const exits = await check("javascript", write("exits.mjs", "export default () => process.exit(7);\n"));
    expect(exits).toMatchObject({ pass: false, broken: true });
    expect(exits.reason).toContain("exits.mjs ended without an answer (exit 7");
    // A busy loop: only another process can be stopped from outside.
    const hangs = await check("javascript", write("hangs.mjs", "export default () => { for (;;) {} };\n"), { timeoutMs: 1500 });
    expect(hangs).toMatchObject({ pass: false, broken: true, reason: "hangs.mjs did not finish within 1.5 s and was killed (give the assertion a longer `timeout`)" });
    // A promise that never settles leaves node nothing to wait on: it runs into the timeout too, told the same way as a script's.
    const never = await check("javascript", write("never.mjs", "export default () => new Promise(() => {});\n"), { timeoutMs: 1500 });
    expect(never).toMatchObject({ pass: false, broken: true, reason: "never.mjs did not finish within 1.5 s and was killed (give the assertion a longer `timeout`)" });
    const odd = await check("javascript", write("odd.mjs", "export default () => 42;\n"));
    expect(odd.reason).toContain("odd.mjs returned 42; a check returns true or false");
    const none = await check("javascript", write("none.mjs", "export const x = 1;\n"));
    expect(none.reason).toContain("exports no function");
  });
});

describe("script checks", { timeout: 120_000 }, () => {
  it("exit 0 passes; the answer is on stdin and the run as JSON in $LLLM_TEST_RUN; what it prints is the reason", async () => {
    writeFileSync(
      path.join(folder, "verify.py"),
      [
        "import json, os, sys",
        "answer = sys.stdin.read()",
        "run = json.load(open(os.environ['LLLM_TEST_RUN']))",
        "calls = [call['name'] for call in run['tool_calls']]",
        "if 'Tokyo' in answer and calls.count('get_weather') == 2 and run['usage']['total_tokens'] == 1000:",
        "    sys.exit(0)",
        "print('expected Tokyo and two weather calls, got', calls)",
        "sys.exit(1)",
      ].join("\n"),
    );
    expect(await check("script", "python3 verify.py")).toMatchObject({ pass: true });
    const failed = await check("script", "python3 verify.py", {}, { ...run, output: "nothing" });
    expect(failed).toMatchObject({ pass: false });
    expect(failed.reason).toContain("`python3 verify.py` exited 1: expected Tokyo and two weather calls, got ['get_weather', 'get_weather', 'to_fahrenheit']");
    expect(failed.broken).toBeUndefined();
  });

  it("a key the script prints is redacted before its output is cut to the reason's 1500 characters", async () => {
    const key = "sk-tail-Vb7kQ2zX9mN4pL8rWq";
    registerSecret(key);
    // The last 1500 characters start inside the key: cut first, its end would show, no longer found whole.
    writeFileSync(path.join(folder, "prints-key.py"), `import sys\nprint(${JSON.stringify(key)} + "y" * 1490)\nsys.exit(1)\n`);
    const failed = await check("script", "python3 prints-key.py");
    expect(failed).toMatchObject({ pass: false });
    expect(failed.reason).toContain(`exited 1: [redacted]${"y".repeat(1490)}`);
    for (let start = 0; start + 5 <= key.length; start++) expect(failed.reason).not.toContain(key.slice(start, start + 5));
  });

  it("a script that hangs is killed with what it started; a missing program is named", async () => {
    const pidFile = path.join(folder, "sleeper.pid");
    // 5 s: long enough for the shell to start its child and write the pid on a busy machine, before the kill.
    const hangs = await check("script", `sh -c 'sleep 60 & echo $! > ${pidFile}; wait'`, { timeoutMs: 5000 });
    expect(hangs).toMatchObject({ pass: false, broken: true });
    expect(hangs.reason).toContain("did not finish within 5 s and was killed");
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    expect(sleeper).toBeGreaterThan(0);
    expect(await waitUntil(() => !isRunning(sleeper))).toBe(true);
    const missing = await check("script", "no-such-program-lllm --x");
    expect(missing).toMatchObject({ pass: false, broken: true });
    expect(missing.reason).toContain("program `no-such-program-lllm` was not found");
  });
});

describe("judge", () => {
  const judged = (reply: string): ScriptedModel => new ScriptedModel([reply]);

  it("asks a model with the rubric, the input and the answer; its score decides against the threshold", async () => {
    const model = judged('{"pass": true, "score": 0.9, "reason": "Both cities have a temperature."}');
    const result = await check("judge", { rubric: "Names both cities and a temperature for each" }, {}, run, () => model);
    expect(result).toMatchObject({ pass: true, score: 0.9, reason: "judge (score 0.9): Both cities have a temperature." });
    const sent = model.requests[0]!;
    expect(sent.agent).toBe("(judge)");
    expect(sent.responseFormat).toEqual({ type: "json_object" });
    expect(sent.messages[1]!.content).toContain("Names both cities and a temperature for each");
    expect(sent.messages[1]!.content).toContain(run.output as string);
    const low = await check("judge", { rubric: "r", threshold: 0.8 }, {}, run, () => judged('{"pass": true, "score": 0.6, "reason": "meh"}'));
    expect(low).toMatchObject({ pass: false, score: 0.6 });
  });

  it("a reply that is not JSON, or a judge that fails, fails the assertion with the reason", async () => {
    const prose = await check("judge", "r", {}, run, () => judged("Looks good to me!"));
    expect(prose).toMatchObject({ pass: false, broken: true });
    expect(prose.reason).toContain("the judge's reply is not JSON");
    const negated = await check("judge", "r", { negate: true }, run, () => judged("Looks good to me!"));
    expect(negated).toMatchObject({ pass: false, broken: true });
    const failing = await check("judge", "r", {}, run, () => new ScriptedModel([]));
    expect(failing).toMatchObject({ pass: false, broken: true });
    expect(failing.reason).toContain("did not answer");
  });
});
