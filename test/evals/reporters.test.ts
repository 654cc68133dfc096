import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { registerSecret } from "../../src/util/redact.js";
import { tempTree } from "../helpers/tempTree.js";
import type { CaseResult, TestRunSummary } from "../../src/index.js";
import { jsonReporter, junitXml, textReporter } from "../../src/index.js";
import type { AssertionSpec } from "../../src/evals/TestFile.js";

function spec(type: AssertionSpec["type"], value: unknown, label: string): AssertionSpec {
  return { type, value, negate: false, weight: 1, timeoutMs: 30_000, label, location: { file: "t.test.yaml" } };
}

const expected = ["Paris: sunny, 22 degrees.", "Tokyo: rain, 18 degrees.", "Oslo: snow, -3 degrees.", "Rome: sunny, 25 degrees."].join("\n");
const got = expected.replace("Tokyo: rain, 18", "Tokyo: rain, 81");

const base: Omit<CaseResult, "name" | "status"> = { file: "tests/w.test.yaml", mode: "replay", assertions: [], score: 1, error: null, runIds: ["01RUN"], durationMs: 12, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, llmCalls: 1 }, cost: 0.00002 };

const summary: TestRunSummary = {
  results: [
    { ...base, name: "passes", status: "passed" },
    {
      ...base,
      name: 'fails <with> "quotes" & \u001b[31mcolour',
      status: "failed",
      score: 0.5,
      assertions: [
        { spec: spec("contains", "Paris", 'contains: "Paris"'), pass: true, score: 1, reason: 'the answer contains "Paris"' },
        { spec: spec("equals", expected, "equals: …"), pass: false, score: 0, reason: "the answer is not the expected text", expected, actual: got },
      ],
    },
    { ...base, name: "skipped", status: "skipped", skipReason: "not run: --bail after a failure", runIds: [], durationMs: 0 },
  ],
  passed: 1,
  failed: 1,
  skipped: 1,
  durationMs: 1234,
  cost: 0.00004,
  costUnknown: 0,
  usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30, llmCalls: 2 },
  bailed: true,
  interrupted: false,
  filteredOut: 0,
};

describe("reporters", () => {
  it("text: a line per case, the failed assertion with a diff of a long text, the run behind it, a summary", () => {
    let out = "";
    const reporter = textReporter({ write: (text) => (out += text) });
    reporter.onRunStart?.({ files: 1, cases: 3, modes: { replay: 3, live: 0, record: 0 }, concurrency: 2 });
    for (const result of summary.results) reporter.onCaseResult?.(result);
    reporter.onRunEnd?.(summary);
    expect(out).toBe(
      [
        "lllm test: 3 cases in 1 file (replay 3), 2 at once",
        " ✓ tests/w.test.yaml › passes  (replay, 12 ms)",
        ' ✗ tests/w.test.yaml › fails <with> "quotes" & \\u001b[31mcolour  (replay, 12 ms)',
        "     ✗ equals: …",
        "       the answer is not the expected text",
        "         Paris: sunny, 22 degrees.",
        "       - Tokyo: rain, 18 degrees.",
        "       + Tokyo: rain, 81 degrees.",
        "         Oslo: snow, -3 degrees.",
        "     run: lllm logs show 01RUN",
        " - tests/w.test.yaml › skipped  (not run: --bail after a failure)",
        "",
        "Tests: 1 failed, 1 passed, 1 skipped (3 cases) · 1.23 s · 30 tokens · <$0.0001 · stopped after the first failure (--bail)",
        "",
      ].join("\n"),
    );
  });

  it("text, in colour: the model's words (the answer, a judge's reason, a run's error) carry no colour of their own", () => {
    const green = "\u001b[32m✓ all good\u001b[39m";
    let out = "";
    const reporter = textReporter({ write: (text) => (out += text), color: true });
    reporter.onCaseResult?.({
      ...base,
      name: "painted",
      status: "failed",
      score: 0,
      problem: { kind: "error", message: `the run failed: ${green}`, hint: `hint ${green}` },
      assertions: [
        { spec: spec("contains", "Paris", 'contains: "Paris"'), pass: false, score: 0, reason: `judge: ${green}`, expected: 'contains "Paris"', actual: `answer ${green}` },
        { spec: spec("equals", "x", 'equals: "x"'), pass: false, score: 0, reason: "the answer is not the expected text", expected: "x", actual: green },
      ],
    });
    expect(out).not.toContain(green);
    for (const shown of ["the run failed: \\u001b[32m✓ all good\\u001b[39m", "hint \\u001b[32m✓", "judge: \\u001b[32m✓", "answer \\u001b[32m✓", "\\u001b[32m✓ all good\\u001b[39m\""]) expect(out).toContain(shown);
  });

  it("json: one object with schema_version, the summary and every case", () => {
    let out = "";
    jsonReporter({ write: (text) => (out += text) }).onRunEnd?.(summary);
    const report = JSON.parse(out) as Record<string, unknown> & { cases: Array<Record<string, unknown>> };
    expect(report).toMatchObject({ schema_version: 1, ok: false, summary: { total: 3, passed: 1, failed: 1, skipped: 1, duration_ms: 1234, bailed: true } });
    expect(report.cases[1]).toMatchObject({ status: "failed", run_ids: ["01RUN"], assertions: [{ assertion: 'contains: "Paris"', pass: true }, { type: "equals", pass: false, expected, actual: got }] });
    expect(report.cases[2]).toMatchObject({ status: "skipped", skip_reason: "not run: --bail after a failure" });
  });

  it("junit: XML CI systems read, escaped, without the characters XML cannot hold", () => {
    const xml = junitXml(summary);
    expect(xml).toContain('<testsuites name="lllm test" tests="3" failures="1" errors="0" skipped="1" time="1.234">');
    expect(xml).toContain('<testsuite name="tests/w.test.yaml" tests="3" failures="1" errors="0" skipped="1" time="0.024"');
    expect(xml).toContain('<testcase classname="tests/w.test.yaml" name="passes" time="0.012"/>');
    expect(xml).toContain('name="fails &lt;with&gt; &quot;quotes&quot; &amp; [31mcolour"');
    expect(xml).toContain('<failure message="equals: …: the answer is not the expected text" type="assertion">');
    expect(xml).toContain("  expected: Paris: sunny, 22 degrees.\nTokyo: rain, 18 degrees.");
    expect(xml).toContain('<skipped message="not run: --bail after a failure"/>');
    expect(xml).not.toContain("\u001b");
  });
});

describe("lllm test --junit", () => {
  it("redacts every key from the report file, in every encoding, as --json and the text report do", { timeout: 120_000 }, async () => {
    // `&`, `<` and `'` are escaped in XML: a redaction after the escapes would miss this key.
    const key = "sk-junit&<key>'0123456789";
    const answer = `raw ${key} base64 ${Buffer.from(key).toString("base64")} url ${encodeURIComponent(key)}`;
    const dir = tempTree({
      "t.yaml": "name: t\nglobal: {model_name: \"scripted:answer.yaml\"}\nagent_configs:\n  - name: a\n    system_prompt: Hi.\n",
      "answer.yaml": `- ${JSON.stringify(answer)}\n`,
      "k.test.yaml": `tactic: ./t.yaml\ncases:\n  - name: leaks\n    input: hi\n    assert:\n      - equals: something else\n`,
    });
    const junit = path.join(dir, "junit.xml");
    const result = await runCli(["test", "k.test.yaml", "--json", "--junit", junit], { cwd: dir, env: { OPENAI_API_KEY: key }, timeoutMs: 110_000 });
    expect(result.code, result.stderr).toBe(1);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain("got: raw [redacted] base64 [redacted] url [redacted]");
    expect(leaksOf(xml, key)).toEqual([]);
    expect(leaksOf(result.stdout + result.stderr, key)).toEqual([]);
  });

  it("a key in a long answer is redacted before the report cuts the line: no first part of it shows", { timeout: 120_000 }, async () => {
    const key = "sk-cut-Qz7Wv9XyJk4Lm2NpRt8c";
    const dir = tempTree({
      "t.yaml": 'name: t\nglobal: {model_name: "scripted:answer.yaml"}\nagent_configs:\n  - name: a\n    system_prompt: Hi.\n',
      // The text report cuts an answer's line at 200 characters: the key straddles the cut.
      "answer.yaml": `- ${JSON.stringify(`${"x".repeat(190)}${key} and more`)}\n`,
      "k.test.yaml": "tactic: ./t.yaml\ncases:\n  - name: long\n    input: hi\n    assert:\n      - contains: something else\n",
    });
    const result = await runCli(["test", "k.test.yaml", "--junit", path.join(dir, "junit.xml")], { cwd: dir, env: { OPENAI_API_KEY: key }, timeoutMs: 110_000 });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`got:      ${"x".repeat(190)}[redacted…`);
    const printed = result.stderr + readFileSync(path.join(dir, "junit.xml"), "utf8");
    for (let start = 0; start + 5 <= key.length; start++) expect(printed).not.toContain(key.slice(start, start + 5));
  });
});

describe("textReporter", () => {
  it("cuts a long line of the answer by characters, never inside the escape of a control character", () => {
    let out = "";
    const reporter = textReporter({ write: (text) => (out += text) });
    const actual = `${"a".repeat(196)}\u001b[2Jmore and more`;
    reporter.onCaseResult?.({ ...base, name: "cut", status: "failed", assertions: [{ spec: spec("contains", "b", "contains: b"), pass: false, score: 0, reason: "no b", expected: "b", actual }] });
    const line = out.split("\n").find((entry) => entry.includes("got:"))!;
    expect(line.endsWith(` ${"a".repeat(196)}…`)).toBe(true);
  });
});

describe("junitXml", () => {
  it("removes what XML cannot hold before it redacts: a key with a control character inside is not made whole", () => {
    const key = "sk-junit-ctl-Hq3Wm8Zr5Tx2Kc9v";
    registerSecret(key);
    const xml = junitXml({ ...summary, results: [{ ...base, name: "ctl", status: "failed", problem: { kind: "error", message: `leak ${key.slice(0, 10)}\u0001${key.slice(10)}` } }] });
    expect(xml).not.toContain(key);
    expect(xml).toContain("leak [redacted]");
  });

  it("redacts a failure's one-line message before cutting it to 300 characters", () => {
    const key = "sk-junit-cut-Vb7kQ2zX9mN4pL8r";
    registerSecret(key);
    const message = `${"y".repeat(290)}${key} and more`;
    const xml = junitXml({ ...summary, results: [{ ...base, name: "cut", status: "failed", problem: { kind: "error", message } }] });
    expect(xml).toContain(`message="${"y".repeat(290)}[redacted…"`);
    for (let start = 0; start + 5 <= key.length; start++) expect(xml).not.toContain(key.slice(start, start + 5));
  });
});
