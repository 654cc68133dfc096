import { ConfigError } from "../errors.js";
import { checkTurns, toConfigProblems } from "../providers/ScriptedTurn.js";
import type { ScriptedTurn } from "../providers/ScriptedTurn.js";

/**
 * What a mock server answers model calls from, shared by the OpenAI, Anthropic and Gemini mocks: the injected
 * failures (served first, one per call), then the scripted turns in order, and the count of calls answered (it
 * numbers the default tool-call ids). The script is checked when given, so a bad turn fails the test at set-up.
 */
export class MockScript<Failure> {
  #turns: ScriptedTurn[] = [];
  #length = 0;
  readonly #failures: Failure[];
  #answered = 0;

  constructor(options: { script?: readonly ScriptedTurn[] | undefined; failures?: readonly Failure[] | undefined }) {
    this.replace(options.script ?? []);
    this.#failures = [...(options.failures ?? [])];
  }

  /** How many turns the script had when given (for the message when it runs out). */
  get length(): number {
    return this.#length;
  }

  /** How many model calls were answered with a turn. */
  get answered(): number {
    return this.#answered;
  }

  /** Replace the remaining script (checked like the first one). */
  replace(turns: readonly ScriptedTurn[]): void {
    const problems = checkTurns(turns);
    if (problems.length > 0) throw ConfigError.fromProblems("config_invalid_script", toConfigProblems(problems, "mock script turn "));
    this.#turns = [...turns];
    this.#length = turns.length;
  }

  /** Queue more failures, after any already queued. */
  addFailures(...failures: Failure[]): void {
    this.#failures.push(...failures);
  }

  /** The failure to serve for this call, if any is left. */
  nextFailure(): Failure | undefined {
    return this.#failures.shift();
  }

  /** The next scripted turn, or undefined when the script is spent. */
  nextTurn(): ScriptedTurn | undefined {
    return this.#turns.shift();
  }

  /** Count a call answered with a turn (scripted or computed); returns its number, from 1. */
  countAnswer(): number {
    this.#answered += 1;
    return this.#answered;
  }
}
