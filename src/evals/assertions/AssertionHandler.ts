import type { Model } from "../../providers/Model.js";
import type { CaseRun } from "../CaseRun.js";

/** What one assertion found. `reason` states the fact either way ("the answer contains \"Paris\""). */
export interface AssertionResult {
  pass: boolean;
  /** 0 to 1: 1 or 0 for most types; a judge's or a javascript check's own score. */
  score: number;
  reason: string;
  /** What was expected and what the run gave, when the report should show them side by side (a diff when long). */
  expected?: string;
  actual?: string;
  /** The check itself failed (threw, timed out, the judge did not answer): the assertion fails even when negated. */
  broken?: boolean;
}

/** What a handler may use besides its value. */
export interface AssertionContext {
  run: CaseRun;
  /** The test file's folder: checks' relative paths are resolved against it, and their programs run there. */
  folder: string;
  timeoutMs: number;
  /** The model a judge calls: live, recorded into the case's cassette, or replayed from it. */
  judgeModel: (model: string | undefined) => Model;
  signal?: AbortSignal;
}

/** One assertion type: a small function of its value and the run. */
export type AssertionHandler = (value: unknown, context: AssertionContext) => AssertionResult | Promise<AssertionResult>;

/** A result that is simply true or false. */
export function verdict(pass: boolean, reason: string, extra: Pick<AssertionResult, "expected" | "actual"> = {}): AssertionResult {
  return { pass, score: pass ? 1 : 0, reason, ...extra };
}

/** A value quoted for a reason, cut when long. */
export function quote(value: unknown, width = 120): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  const flat = JSON.stringify(text.length > width ? `${text.slice(0, width - 1)}…` : text);
  return typeof value === "string" ? flat : flat.slice(1, -1).replace(/\\"/g, '"');
}
