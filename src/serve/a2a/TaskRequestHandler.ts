import { TaskState, type AgentCard, type CancelTaskRequest, type Task } from "@a2a-js/sdk";
import { TaskNotCancelableError } from "@a2a-js/sdk/errors";
import { DefaultRequestHandler, type AgentExecutor, type ServerCallContext } from "@a2a-js/sdk/server";
import type { A2aTasks } from "./A2aTasks.js";

/**
 * The SDK's request handler, with `tasks/cancel` as the A2A spec has it: a task in a terminal state (completed,
 * failed, rejected, canceled) is not cancelable (TaskNotCancelableError, -32002). The SDK refuses the others, but
 * answers a second cancel of a canceled task with the task, as if this request had cancelled it.
 */
export class TaskRequestHandler extends DefaultRequestHandler {
  readonly #tasks: A2aTasks;

  constructor(card: AgentCard, tasks: A2aTasks, executor: AgentExecutor) {
    super(card, tasks, executor);
    this.#tasks = tasks;
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    if (typeof params.id === "string" && this.#tasks.get(params.id)?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`task ${params.id} is already canceled: a task that ended cannot be canceled`);
    }
    return super.cancelTask(params, context);
  }
}
