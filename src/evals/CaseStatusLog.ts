import { RunSpool } from "../store/RunSpool.js";
import { storeFile } from "../store/startRunLog.js";
import type { CaseRun } from "./CaseRun.js";
import type { TestFile } from "./TestFile.js";

/**
 * Marks the runs of decided cases as a passed or failed test case (`test_status` in `lllm logs --json`, and the
 * viewer's marks): a line in the process's run spool after the runs' own, merged into the store by its next reader
 * like them. The lines wait in the spool's buffer (a write per case would cost more than replaying it) and are
 * written at the end of the test run (`flush`). A case whose line was lost (the process was killed) shows as not
 * decided; a spool that cannot be written is a warning (once), never a failed case.
 */
export class CaseStatusLog {
  readonly #spools = new Set<RunSpool>();
  readonly #warn: (message: string) => void;
  readonly #env: NodeJS.ProcessEnv;

  constructor(options: { env?: NodeJS.ProcessEnv; warn: (message: string) => void }) {
    this.#warn = options.warn;
    this.#env = options.env ?? process.env;
  }

  add(testFile: TestFile, runs: readonly CaseRun[], pass: boolean): void {
    const ids = runs.flatMap((run) => (run.runId === null ? [] : [run.runId]));
    if (ids.length === 0) return;
    const spool = RunSpool.of(storeFile(this.#env, testFile.prepared.settings.home));
    this.#spools.add(spool);
    try {
      spool.append({ test: { runs: ids, status: pass ? "passed" : "failed" } }, { now: false });
    } catch (error) {
      spool.warnOnce(this.#warn, `the run log could not record the outcome of test cases: ${(error as Error).message}`);
    }
  }

  /** Write what waits. */
  flush(): void {
    for (const spool of this.#spools) {
      try {
        spool.flush();
      } catch (error) {
        spool.warnOnce(this.#warn, `the run log could not record the outcome of test cases: ${(error as Error).message}`);
      }
    }
  }
}
