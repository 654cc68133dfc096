import { LllmError } from "../errors.js";
import { batchItemKey, batchItemPrefix } from "../store/journal/batchItemKey.js";
import { RunJournal } from "../store/journal/RunJournal.js";
import { runSetup, setupChanges } from "../store/journal/runSetup.js";
import { unknownOutcome } from "../store/journal/ToolJournal.js";
import { RunStore } from "../store/RunStore.js";
import type { ResumeInfo } from "../store/SpoolEntry.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { isPlainObject } from "../util/isPlainObject.js";

/** How an item of a batch run again starts: resumed from its stopped run, or refused (a call its stop cut short). */
export type ItemResume = { journal: RunJournal; rerunUnknown: (call: { key: string }) => boolean } | { refused: LllmError };

export interface ItemResumesOptions {
  /** The run store's file. */
  file: string;
  /** The batch's scope (see `batchItemKey`): the absolute path of its `--out`. */
  scope: string;
  prepared: PreparedTactic;
  /** `--rerun-unknown`: a call cut short by the stop runs again whatever its tool says. */
  rerunUnknown: boolean;
  warn: (message: string) => void;
}

/**
 * The items of a batch run again (the same `--out`) whose runs stopped mid-way (a kill, a crash, a Ctrl-C): each
 * resumes its run as `lllm run --resume` would, its recorded rounds replayed, so that no round is repeated. Read in
 * one query when the batch starts; a run's journal is read when its item starts. An item whose tactic changed since
 * runs from its start (said once); one whose stop cut a call short that may not run again is refused, its run left
 * as it is for a rerun with --rerun-unknown.
 */
export class ItemResumes {
  readonly #store: RunStore;
  readonly #stopped: Map<string, string>;
  readonly #options: ItemResumesOptions;
  #setup: Record<string, string> | undefined;
  #warnedChange = false;

  private constructor(store: RunStore, stopped: Map<string, string>, options: ItemResumesOptions) {
    this.#store = store;
    this.#stopped = stopped;
    this.#options = options;
  }

  /** Undefined when no item of `out` stopped mid-way (nothing is kept open then). */
  static open(options: ItemResumesOptions): ItemResumes | undefined {
    if (!RunStore.exists(options.file)) return undefined;
    const store = RunStore.openSync(options.file, { warn: options.warn });
    const stopped = store.stoppedBatchItems(batchItemPrefix(options.scope));
    if (stopped.size === 0) {
      store.close();
      return undefined;
    }
    return new ItemResumes(store, stopped, options);
  }

  /** How many items will resume. */
  get size(): number {
    return this.#stopped.size;
  }

  /** The item's resume, when its run stopped mid-way and can go on. */
  of(itemId: string): ItemResume | undefined {
    const key = batchItemKey(this.#options.scope, itemId);
    const runId = this.#stopped.get(key);
    if (runId === undefined) return undefined;
    // Once: an item run again later in this batch (a rerun of a failed one) starts anew.
    this.#stopped.delete(key);
    const record = this.#store.getRun(runId);
    const journal = this.#store.getJournal(runId);
    if (!record || !journal) return undefined;
    const resume = journal.resume;
    if (isPlainObject(resume) && isPlainObject(resume["setup"])) {
      const changes = setupChanges((resume as unknown as ResumeInfo).setup, (this.#setup ??= runSetup(this.#options.prepared)));
      if (changes.length > 0) {
        if (!this.#warnedChange) this.#options.warn(`the tactic changed since this batch's items stopped (${changes.join("; ")}): they run again from their start`);
        this.#warnedChange = true;
        return undefined;
      }
    }
    let run: RunJournal;
    try {
      run = new RunJournal({ run: record, tools: journal.tools });
    } catch (error) {
      if (error instanceof LllmError) return { refused: error };
      throw error;
    }
    const unsafe = run.unfinished.filter((call) => call.note.rerun === undefined);
    if (unsafe.length > 0 && !this.#options.rerunUnknown) return { refused: unknownOutcome(unsafe[0]!.note.agent, unsafe[0]!.note) };
    const allowed = new Set(unsafe.map((call) => call.key));
    return { journal: run, rerunUnknown: (call) => allowed.has(call.key) };
  }

  close(): void {
    this.#store.close();
  }

  /**
   * One item's resume, looked up on its own (a queue worker taking back an item of a worker that died): the store is
   * opened for it and closed again.
   */
  static forItem(options: ItemResumesOptions, itemId: string): ItemResume | undefined {
    if (!RunStore.exists(options.file)) return undefined;
    const store = RunStore.openSync(options.file, { warn: options.warn });
    try {
      const key = batchItemKey(options.scope, itemId);
      const runId = store.stoppedBatchItems(key).get(key);
      return runId === undefined ? undefined : new ItemResumes(store, new Map([[key, runId]]), options).of(itemId);
    } finally {
      store.close();
    }
  }
}
