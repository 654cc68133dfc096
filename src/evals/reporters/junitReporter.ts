import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../../errors.js";
import { redactSecrets } from "../../util/redact.js";
import type { CaseResult } from "../CaseResult.js";
import type { Reporter, TestRunSummary } from "./Reporter.js";

/**
 * `--junit FILE`: JUnit XML as CI systems read it (GitHub Actions test reporters, GitLab's `artifacts:reports:junit`):
 * a `<testsuite>` per test file, a `<testcase>` per case, with `<failure>` (what failed, and why) or `<skipped>`.
 * A path that cannot be a file (a folder, or under a file) is a `ConfigError` now, before any case runs; one that
 * cannot be written at the end is one too.
 */
export function junitReporter(options: { file: string }): Reporter {
  checkReportPath(options.file);
  return {
    onRunEnd(summary) {
      try {
        mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
        writeFileSync(options.file, junitXml(summary));
      } catch (error) {
        throw new ConfigError("test_usage", `--junit: cannot write ${options.file}: ${(error as Error).message}`, { location: { file: "--junit" }, hint: "Give a file in a folder you can write, e.g. --junit reports/junit.xml.", cause: error });
      }
    },
  };
}

/** The report's path: not a folder, and no file where a folder above it must be. */
function checkReportPath(file: string): void {
  const absolute = path.resolve(file);
  const problem = (message: string): ConfigError => new ConfigError("test_usage", `--junit ${message}`, { location: { file: "--junit" }, hint: "Give the report's file, e.g. --junit reports/junit.xml (its folders are made when missing)." });
  if (kindOf(absolute) === "folder") throw problem(`names a folder (${file}): it takes the file to write the JUnit XML to`);
  for (let folder = path.dirname(absolute); ; folder = path.dirname(folder)) {
    const kind = kindOf(folder);
    if (kind === "file") throw problem(`${file}: ${folder} is a file, not a folder`);
    if (kind === "folder" || folder === path.dirname(folder)) return;
  }
}

function kindOf(file: string): "file" | "folder" | undefined {
  try {
    return statSync(file).isDirectory() ? "folder" : "file";
  } catch {
    return undefined;
  }
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
  // Redacted before it is cut: a key cut in two is no longer found whole by the redaction in `escape`.
  const first = redactSecrets(result.problem?.message.split("\n")[0] ?? (failed[0] ? `${failed[0].spec.label}: ${failed[0].reason}` : "failed"));
  return { message: first.length > 300 ? `${first.slice(0, 299)}…` : first, details: lines.join("\n") };
}

/**
 * Text safe in XML attributes and content; characters XML 1.0 cannot hold at all are dropped. The report is a file
 * that leaves lllm (a CI artifact), and it quotes answers and errors: every key is redacted here, before the XML
 * escapes, which would hide a key holding `&` or `<` from the redaction.
 */
function escape(text: string): string {
  // What XML cannot hold goes first, then keys: a key with a control character inside would be missed by redaction,
  // then made whole by the removal.
  return redactSecrets(text.replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, ""))
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
