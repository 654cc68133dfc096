import { RunStore } from "../store/RunStore.js";
import { storeFile } from "../store/startRunLog.js";
import type { CaseRun } from "./CaseRun.js";
import type { TestFile } from "./TestFile.js";

/**
 * Mark a case's runs in the run store as a passed or failed test case (`lllm logs --json`'s `test_status`, and the
 * viewer's marks). The runs were written when they ended, on the process's shared connection; a store that cannot
 * be written is a warning, never a failed case.
 */
export function recordCaseStatus(testFile: TestFile, runs: readonly CaseRun[], pass: boolean, options: { env?: NodeJS.ProcessEnv; warn: (message: string) => void }): void {
  const ids = runs.flatMap((run) => (run.runId === null ? [] : [run.runId]));
  if (ids.length === 0) return;
  try {
    RunStore.shared(storeFile(options.env ?? process.env, testFile.prepared.settings.home)).setTestStatus(ids, pass ? "passed" : "failed");
  } catch (error) {
    options.warn(`the run log could not record the outcome of runs ${ids.join(", ")}: ${(error as Error).message}`);
  }
}
