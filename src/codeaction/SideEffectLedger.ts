import type { ToolEnvelope } from "./ToolEnvelope.js";

/**
 * The calls to tools with side effects (`side_effects: true`) that really ran in a run's earlier, failed
 * programs, so that a repaired program does not run them twice (seed 002): its call with the same tool and
 * identical arguments gets the recorded answer instead, errors included (a failed call may have acted
 * partly). Each recorded call is handed out once per program, in order: a program that sends two identical
 * emails after the failed one sent one sends exactly one more.
 */
export class SideEffectLedger {
  readonly #ran = new Map<string, ToolEnvelope[]>();
  #used = new Map<string, number>();

  /** A new program starts: every recorded call may be replayed once again. */
  startProgram(): void {
    this.#used = new Map();
  }

  /** The recorded answer for the next identical call of this program, if there is one left. */
  replay(key: string): ToolEnvelope | undefined {
    const index = this.#used.get(key) ?? 0;
    const recorded = this.#ran.get(key)?.[index];
    if (recorded !== undefined) this.#used.set(key, index + 1);
    return recorded;
  }

  /** A call that really ran. */
  record(key: string, envelope: ToolEnvelope): void {
    const list = this.#ran.get(key) ?? [];
    list.push(envelope);
    this.#ran.set(key, list);
    this.#used.set(key, list.length);
  }
}
