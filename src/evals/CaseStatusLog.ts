import { RunStore } from "../store/RunStore.js";
import { storeFile } from "../store/startRunLog.js";
import type { CaseRun } from "./CaseRun.js";
import type { TestFile } from "./TestFile.js";

/** How many decided cases are kept before they are written (one transaction for them all). */
const BATCH = 100;

interface Pending {
  file: string;
  runIds: string[];
  status: "passed" | "failed";
}

/**
 * Marks the runs of decided cases in the run store as a passed or failed test case (`test_status` in `lllm logs
 * --json`, and the viewer's marks). The runs themselves were written as they ended; their outcomes are written in
 * batches (a commit per case would cost more than replaying it) and at the end of the test run (`flush`). A case
 * whose outcome was never written (the process was killed) shows as not decided. A store that cannot be written
 * is a warning, never a failed case.
 */
export class CaseStatusLog {
  readonly #pending: Pending[] = [];
  readonly #warn: (message: string) => void;
  readonly #env: NodeJS.ProcessEnv;

  constructor(options: { env?: NodeJS.ProcessEnv; warn: (message: string) => void }) {
    this.#warn = options.warn;
    this.#env = options.env ?? process.env;
  }

  add(testFile: TestFile, runs: readonly CaseRun[], pass: boolean): void {
    const runIds = runs.flatMap((run) => (run.runId === null ? [] : [run.runId]));
    if (runIds.length === 0) return;
    this.#pending.push({ file: storeFile(this.#env, testFile.prepared.settings.home), runIds, status: pass ? "passed" : "failed" });
    if (this.#pending.length >= BATCH) this.flush();
  }

  /** Write what is kept. */
  flush(): void {
    const pending = this.#pending.splice(0);
    const byStore = new Map<string, Pending[]>();
    for (const entry of pending) byStore.set(entry.file, [...(byStore.get(entry.file) ?? []), entry]);
    for (const [file, entries] of byStore) {
      try {
        RunStore.shared(file).setTestStatus(entries);
      } catch (error) {
        this.#warn(`the run log could not record the outcome of ${entries.length} test case${entries.length === 1 ? "" : "s"}: ${(error as Error).message}`);
      }
    }
  }
}
