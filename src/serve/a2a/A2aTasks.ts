import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from "@a2a-js/sdk";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { RunSpool } from "../../store/RunSpool.js";
import type { HeldStore } from "../../store/HeldStore.js";
import { redactSecrets } from "../../util/redact.js";
import { statusMessage } from "./a2aParts.js";

/** How many tasks are kept in memory; older ones are read back from the run store. */
const IN_MEMORY = 10_000;

const TERMINAL = new Set<TaskState>([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

/**
 * The A2A tasks of a server (the SDK's `TaskStore`): in memory, and in the run store (`a2a_tasks`, redacted) so that
 * `tasks/get` answers after a restart. A task is written to the store when its state changes (not at every streamed
 * chunk: the SDK saves the task at each event), with its artifacts' adjacent text parts joined into one. A task read
 * back from the store that was still going when its server stopped reads as failed: no run carries it any more.
 */
export class A2aTasks implements TaskStore {
  readonly #byId = new Map<string, Task>();
  readonly #written = new Map<string, TaskState>();
  /** The run carrying each task, once known (kept in its row). */
  readonly #runs = new Map<string, string>();
  /** The run store, when runs are recorded. */
  readonly #store: HeldStore | undefined;
  readonly #warn: (message: string) => void;

  constructor(options: { store?: HeldStore; warn: (message: string) => void }) {
    this.#store = options.store;
    this.#warn = options.warn;
  }

  async save(task: Task, _context: ServerCallContext): Promise<void> {
    const kept = structuredClone(task);
    for (const artifact of kept.artifacts) artifact.parts = joinTexts(artifact.parts);
    this.#byId.delete(kept.id);
    this.#byId.set(kept.id, kept);
    if (this.#byId.size > IN_MEMORY) this.#byId.delete(this.#byId.keys().next().value!);
    const state = kept.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (this.#written.get(kept.id) === state) return;
    this.#written.set(kept.id, state);
    if (TERMINAL.has(state)) setTimeout(() => this.#written.delete(kept.id), 60_000).unref();
    this.#write(kept);
  }

  async load(taskId: string, _context: ServerCallContext): Promise<Task | undefined> {
    const task = this.#byId.get(taskId) ?? this.#fromStore(taskId);
    return task ? structuredClone(task) : undefined;
  }

  /** The task as kept, without a call's context (the executor's own look-up). */
  get(taskId: string): Task | undefined {
    return this.#byId.get(taskId) ?? this.#fromStore(taskId);
  }

  async list(_params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    // Not offered: one token is shared by every client of a server, so a list would hand each client the others'
    // tasks, their messages (images too) and answers. A client reads its own tasks by the ids it was given.
    throw new UnsupportedOperationError("ListTasks is not offered by lllm serve: its clients share one token, and a list would show each the others' tasks; read a task by its id (GetTask, tasks/get)");
  }

  /** Note the run that carries a task (written with its next state). */
  carriedBy(taskId: string, runId: string | undefined): void {
    if (runId !== undefined) this.#runs.set(taskId, runId);
  }

  #write(task: Task): void {
    if (this.#store === undefined) return;
    const spool = RunSpool.of(this.#store.file);
    try {
      spool.append({ a2aTask: { id: task.id, contextId: task.contextId, run: this.#runs.get(task.id) ?? null, updatedAt: Date.now(), body: redactSecrets(JSON.stringify(Task.toJSON(task))) } }, { now: true });
    } catch (error) {
      spool.warnOnce(this.#warn, `A2A tasks cannot be kept in the run store: ${(error as Error).message}; they are kept in memory only`);
    }
  }

  #fromStore(taskId: string): Task | undefined {
    const row = this.#store?.read((store) => store.getA2aTask(taskId));
    if (!row) return undefined;
    const task = Task.fromJSON(JSON.parse(row.body));
    const state = task.status?.state;
    if (state !== undefined && !TERMINAL.has(state)) {
      // Its run ended with the server that ran it.
      task.status = { state: TaskState.TASK_STATE_FAILED, message: statusMessage(task, "the server stopped before this task ended; send the message again"), timestamp: new Date().toISOString() };
    }
    this.#byId.set(taskId, task);
    return task;
  }
}

/** Adjacent text parts (the chunks of a streamed answer) as one. */
function joinTexts(parts: Task["artifacts"][number]["parts"]): Task["artifacts"][number]["parts"] {
  const joined: typeof parts = [];
  for (const part of parts) {
    const last = joined.at(-1);
    if (last?.content?.$case === "text" && part.content?.$case === "text" && last.mediaType === part.mediaType) last.content = { $case: "text", value: last.content.value + part.content.value };
    else joined.push(part);
  }
  return joined;
}
