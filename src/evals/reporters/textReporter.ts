import { formatCost } from "../../store/RunTally.js";
import { redactSecrets } from "../../util/redact.js";
import { terminalText } from "../../util/terminalText.js";
import { textDiff } from "../../util/textDiff.js";
import type { CaseResult } from "../CaseResult.js";
import type { AssertionOutcome } from "../checkAssertion.js";
import type { Reporter, TestRunSummary } from "./Reporter.js";
import { plural } from "../../util/plural.js";

export interface TextReporterOptions {
  /** Where lines go (the CLI: stderr). */
  write: (text: string) => void;
  color?: boolean;
  /** Also list each passed case's assertions. */
  verbose?: boolean;
}

const STYLES = { red: [31, 39], green: [32, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22] } as const;

/**
 * The report people read: a line per case as it ends (a mark, the file and case, how it ran), and under a failed
 * case what failed: the assertion, why, expected against got (a diff for long texts), the run behind it; then a
 * summary with counts, time and cost.
 */
export function textReporter(options: TextReporterOptions): Reporter {
  const paint = (style: keyof typeof STYLES, text: string): string => (options.color ? `\u001b[${STYLES[style][0]}m${text}\u001b[${STYLES[style][1]}m` : text);
  const line = (text = ""): void => options.write(`${text}\n`);
  return {
    onRunStart(start) {
      const modes = Object.entries(start.modes).filter(([, count]) => count > 0).map(([mode, count]) => `${mode === "record" ? "to record" : mode === "live" && start.offline ? "without a cassette" : mode} ${count}`);
      line(paint("dim", `lllm test: ${start.cases} case${start.cases === 1 ? "" : "s"} in ${start.files} file${start.files === 1 ? "" : "s"} (${modes.join(", ") || "none to run"}), ${start.concurrency} at once`));
    },
    onCaseResult(result) {
      const mark = result.status === "passed" ? paint("green", "✓") : result.status === "skipped" ? paint("yellow", "-") : paint("red", "✗");
      const how = result.status === "skipped" ? terminalText(result.skipReason ?? "skipped") : `${result.mode === "record" ? "recorded" : result.problem?.kind === "no_cassette" ? "no cassette" : result.mode}, ${formatDuration(result.durationMs)}${result.repeat ? `, ${result.repeat.passed}/${plural(result.repeat.runs, "run")} passed` : ""}`;
      line(` ${mark} ${result.file} › ${terminalText(result.name)}  ${paint("dim", `(${how})`)}`);
      if (result.status === "failed" || options.verbose) for (const text of details(result, paint, result.status === "failed")) line(`     ${text}`);
    },
    onRunEnd(summary) {
      line();
      if (summary.unmatchedFilter !== undefined) line(paint("red", `no case matches --filter ${JSON.stringify(summary.unmatchedFilter)} (${summary.filteredOut} case${summary.filteredOut === 1 ? "" : "s"} left out); it matches text in \`<file> › <case name>\`, ignoring case`));
      line(summaryLine(summary, paint));
    },
  };
}

type Paint = (style: keyof typeof STYLES, text: string) => string;

function details(result: CaseResult, paint: Paint, failed: boolean): string[] {
  const lines: string[] = [];
  if (result.problem) {
    lines.push(...shown(result.problem.message).split("\n").map((text, index) => (index === 0 ? paint("red", text) : text)));
    if (result.problem.hint) lines.push(paint("dim", shown(result.problem.hint)));
  }
  for (const outcome of result.assertions) {
    if (failed && outcome.pass) continue;
    lines.push(...assertionLines(outcome, paint));
  }
  if (result.repeat && failed) lines.push(`${result.repeat.passed} of ${plural(result.repeat.runs, "run")} passed; ${Math.ceil(result.repeat.threshold * result.repeat.runs)} needed (threshold ${result.repeat.threshold})`);
  if (failed && result.runIds.length > 0) lines.push(paint("dim", `run: lllm logs show ${result.runIds.at(-1)}`));
  return lines;
}

function assertionLines(outcome: AssertionOutcome, paint: Paint): string[] {
  const mark = outcome.pass ? paint("green", "✓") : paint("red", "✗");
  const turn = outcome.spec.turn !== undefined ? ` (turn ${outcome.spec.turn})` : "";
  const lines = [`${mark} ${shown(outcome.spec.label)}${turn}`, `  ${shown(outcome.reason).split("\n").join("\n  ")}`];
  if (outcome.pass || outcome.expected === undefined || outcome.actual === undefined) return lines;
  if (outcome.spec.type === "equals" && !outcome.spec.negate) {
    lines.push(...textDiff(redactSecrets(outcome.expected), redactSecrets(outcome.actual), { labels: ["expected", "got"] }).map((text) => `  ${colorDiff(terminalText(text), paint)}`));
  } else {
    lines.push(`  ${paint("dim", "expected:")} ${shown(outcome.expected)}`, `  ${paint("dim", "got:     ")} ${excerpt(shown(outcome.actual))}`);
  }
  return lines;
}

/**
 * A text of the model's (an answer, a judge's reason, a run's error) as the report shows it: redacted before it is
 * cut to an excerpt or a diff's window (a key cut in two is no longer found whole, and its first part would show),
 * and escaped before lllm paints it, so that not even a colour of lllm's own (which stderr keeps) comes from it.
 */
function shown(text: string): string {
  return terminalText(redactSecrets(text));
}

function colorDiff(text: string, paint: Paint): string {
  return text.startsWith("- ") ? paint("red", text) : text.startsWith("+ ") ? paint("green", text) : text;
}

/** A long answer shown in a few lines. */
/**
 * A line of at most 200 characters: cut by code points (not between an emoji's halves), and not inside the escape
 * (`\u001b`) that `terminalText` wrote for a control character.
 */
function cutLine(line: string): string {
  const characters = Array.from(line);
  if (characters.length <= 200) return line;
  return `${characters.slice(0, 199).join("").replace(/\\(?:u[0-9a-f]{0,3})?$/, "")}…`;
}

function excerpt(text: string): string {
  const lines = text.split("\n");
  const shown = lines.slice(0, 5).map(cutLine);
  const more = lines.length > shown.length ? `\n            … (${lines.length - shown.length} more lines)` : "";
  return shown.join("\n            ") + more;
}

function summaryLine(summary: TestRunSummary, paint: Paint): string {
  const total = summary.results.length;
  const parts = [
    summary.failed > 0 ? paint("red", `${summary.failed} failed`) : undefined,
    summary.passed > 0 ? paint("green", `${summary.passed} passed`) : undefined,
    summary.skipped > 0 ? paint("yellow", `${summary.skipped} skipped`) : undefined,
  ].filter((part): part is string => part !== undefined);
  const cost = summary.usage.llmCalls === 0 ? "$0" : `${formatCost(summary.cost)}${summary.costUnknown > 0 ? ` (+ ${summary.costUnknown} case${summary.costUnknown === 1 ? "" : "s"} of unknown price)` : ""}`;
  const extra = [summary.filteredOut > 0 ? `${summary.filteredOut} filtered out` : "", summary.bailed ? "stopped after the first failure (--bail)" : "", summary.interrupted ? "interrupted" : ""].filter(Boolean);
  return `${paint("bold", "Tests:")} ${parts.join(", ") || "none"} (${total} case${total === 1 ? "" : "s"}) · ${formatDuration(summary.durationMs)} · ${summary.usage.totalTokens} tokens · ${cost}${extra.length > 0 ? ` · ${extra.join(" · ")}` : ""}`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
