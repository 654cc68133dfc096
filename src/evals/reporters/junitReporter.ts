import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { CaseResult } from "../CaseResult.js";
import type { Reporter, TestRunSummary } from "./Reporter.js";

/**
 * `--junit FILE`: JUnit XML as CI systems read it (GitHub Actions test reporters, GitLab's `artifacts:reports:junit`):
 * a `<testsuite>` per test file, a `<testcase>` per case, with `<failure>` (what failed, and why) or `<skipped>`.
 */
export function junitReporter(options: { file: string }): Reporter {
  return {
    onRunEnd(summary) {
      mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
      writeFileSync(options.file, junitXml(summary));
    },
  };
}

export function junitXml(summary: TestRunSummary): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const result of summary.results) byFile.set(result.file, [...(byFile.get(result.file) ?? []), result]);
  const count = (results: CaseResult[], status: CaseResult["status"]): number => results.filter((result) => result.status === status).length;
  const seconds = (ms: number): string => (ms / 1000).toFixed(3);
  const timestamp = new Date(Date.now() - summary.durationMs).toISOString().replace(/\.\d+Z$/, "");
  const suites = [...byFile].map(([file, results]) => {
    const time = results.reduce((total, result) => total + result.durationMs, 0);
    const cases = results.map((result) => {
      const open = `    <testcase classname="${escape(file)}" name="${escape(result.name)}" time="${seconds(result.durationMs)}"`;
      if (result.status === "passed") return `${open}/>`;
      if (result.status === "skipped") return `${open}>\n      <skipped message="${escape(result.skipReason ?? "skipped")}"/>\n    </testcase>`;
      const { message, details } = failureOf(result);
      return `${open}>\n      <failure message="${escape(message)}" type="${escape(result.problem?.kind ?? "assertion")}">${escape(details)}</failure>\n    </testcase>`;
    });
    return `  <testsuite name="${escape(file)}" tests="${results.length}" failures="${count(results, "failed")}" errors="0" skipped="${count(results, "skipped")}" time="${seconds(time)}" timestamp="${timestamp}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  const total = summary.results;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="lllm test" tests="${total.length}" failures="${summary.failed}" errors="0" skipped="${summary.skipped}" time="${seconds(summary.durationMs)}">\n${suites.join("\n")}\n</testsuites>\n`;
}

/** The one-line message and the full text of a failed case. */
function failureOf(result: CaseResult): { message: string; details: string } {
  const failed = result.assertions.filter((outcome) => !outcome.pass);
  const lines: string[] = [];
  if (result.problem) lines.push(result.problem.message, ...(result.problem.hint ? [result.problem.hint] : []));
  for (const outcome of failed) {
    lines.push(`${outcome.spec.label}: ${outcome.reason}`);
    if (outcome.expected !== undefined && outcome.actual !== undefined) lines.push(`  expected: ${outcome.expected}`, `  got: ${outcome.actual}`);
  }
  if (result.runIds.length > 0) lines.push(`run: lllm logs show ${result.runIds.at(-1)}`);
  const first = result.problem?.message.split("\n")[0] ?? (failed[0] ? `${failed[0].spec.label}: ${failed[0].reason}` : "failed");
  return { message: first.length > 300 ? `${first.slice(0, 299)}…` : first, details: lines.join("\n") };
}

/** Text safe in XML attributes and content; characters XML 1.0 cannot hold at all are dropped. */
function escape(text: string): string {
  return text
    .replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
