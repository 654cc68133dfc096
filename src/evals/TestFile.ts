import type { SourceLocation } from "../errors.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";

/** The assertion types a test file may use; each may be negated with a `not-` prefix or a `not:` wrapper. */
export const ASSERTION_TYPES = [
  "contains",
  "equals",
  "regex",
  "tool-called",
  "tool-not-called",
  "tool-order",
  "max-tool-calls",
  "max-cost",
  "max-tokens",
  "json-schema",
  "javascript",
  "script",
  "judge",
] as const;

export type AssertionType = (typeof ASSERTION_TYPES)[number];

/** One assertion of a case, checked and normalised: its type, its value, and the fields every type has. */
export interface AssertionSpec {
  type: AssertionType;
  value: unknown;
  /** Negated (`not-<type>`, or inside `not:`): passes when the type's check fails. */
  negate: boolean;
  /** Its share of the case's score (a case passes only when all its assertions pass). */
  weight: number;
  /** The turn of a multi-turn case it is about, 1-based; `undefined`: the last. */
  turn?: number;
  /** How long a javascript, script or judge check may take. */
  timeoutMs: number;
  /** How it reads in a report: `not-contains: "error"`. */
  label: string;
  location: SourceLocation;
}

/** One case of a test file. */
export interface TestCase {
  name: string;
  /** The inputs of its turns: one for `input`, several for `turns`. */
  inputs: unknown[];
  /** Given as `turns:` (a conversation): each turn continues the dialog. */
  conversation: boolean;
  vars: Record<string, string>;
  assertions: AssertionSpec[];
  /** The run must fail with this error class or code. */
  expectError?: string;
  /** The run must end with this exit code. */
  expectExit?: number;
  repeat: number;
  threshold: number;
  location: SourceLocation;
}

/** A test file, loaded, checked and with its tactic prepared: ready to run. */
export interface TestFile {
  /** Absolute. */
  file: string;
  /** As messages show it (relative to the working folder when inside it). */
  shown: string;
  /** The tactic as the file names it. */
  tactic: string;
  prepared: PreparedTactic;
  /** The `model` override, when given. */
  model?: string;
  cases: TestCase[];
}
