import { TaskState, type Message } from "@a2a-js/sdk";
import { AgentEvent as A2aEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import type { AgentEvent } from "../../agent/index.js";
import type { MediaAttachment } from "../../providers/Model.js";
import { InterruptedError } from "../../errors.js";
import { escapeControlCharacters } from "../../util/escapeControlCharacters.js";
import { redactSecrets } from "../../util/redact.js";
import { StreamRedactor } from "../../util/StreamRedactor.js";
import { answerText, unstreamedRest } from "../answerText.js";
import { HttpError } from "../HttpError.js";
import type { RouteRequest } from "../Route.js";
import { runErrorToHttp } from "../runErrorToHttp.js";
import { runRequest, type RunRequestOptions, type RunSpec } from "../runRequest.js";
import type { ServeContext } from "../ServeContext.js";
import type { ServedModel } from "../ServedModels.js";
import type { RunHandle } from "../RunHandle.js";
import type { ApprovalCall, RunOutcome } from "../ServedRun.js";
import { dataPart, messageInput, statusMessage, submittedTask, textOf, textPart } from "./a2aParts.js";
import type { A2aTasks } from "./A2aTasks.js";

/** Keys of the SDK's per-call state (`ServerCallContext.state`) the route fills. */
export const ROUTE_REQUEST = "lllm.routeRequest";
export const STREAMING = "lllm.streaming";

/** Why a run was cancelled by `tasks/cancel`: its task then reads `canceled`, not `failed`. */
class CancelledByClient extends InterruptedError {}

/** The id a task's run waits for its approval under, in the server's paused runs. */
const approvalKey = (taskId: string): string => `a2a:${taskId}`;

/** The words that approve a call (anything else refuses it). */
const YES = /^\s*(y|yes|ok|okay|approve|approved|allow|allowed|run it|go ahead|true)\s*[.!]?\s*$/i;

/**
 * Runs served tactics as A2A tasks (the SDK's `AgentExecutor`): the message's skill (`metadata.skill`; the one
 * tactic when there is one) is the tactic, its text or data the input. The task goes `working`, each tool call is
 * a status message, the answer streams as chunks of one artifact (`answer`) when the client streams, then the task
 * is `completed` with it, or `failed` (with lllm's message), or `canceled`. A tool that needs approval puts the task
 * in `input-required` (unless the server runs with --approve all); the client's next message on the task answers
 * (yes runs the call, anything else refuses it) and the same run goes on.
 */
export class TacticExecutor implements AgentExecutor {
  readonly #context: ServeContext;
  readonly #tasks: A2aTasks;
  /** The runs of the tasks going on (paused ones included), by task id. */
  readonly #running = new Map<string, RunHandle>();

  constructor(context: ServeContext, tasks: A2aTasks) {
    this.#context = context;
    this.#tasks = tasks;
  }

  execute = async (requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    try {
      await this.#execute(requestContext, bus);
    } catch (error) {
      // Never left to the SDK: it would print the error's stack on stderr after the client's raw messageId (a line
      // a client writes), and tell the client the error's own message.
      this.#context.warn(`an A2A task failed unexpectedly: ${escapeControlCharacters(redactSecrets(error instanceof Error ? error.message : String(error)), { all: true })}`);
      new TaskPublisher(bus, { taskId: requestContext.taskId, contextId: requestContext.contextId }, false).end(TaskState.TASK_STATE_FAILED, "internal error: the task failed unexpectedly; see the server's log");
    }
  };

  async #execute(requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const request = requestContext.context.state.get(ROUTE_REQUEST) as RouteRequest;
    const streaming = requestContext.context.state.get(STREAMING) === true;
    const ids = { taskId: requestContext.taskId, contextId: requestContext.contextId };
    const message = requestContext.userMessage;
    const existing = requestContext.task;
    const publisher = new TaskPublisher(bus, ids, streaming);
    if (existing) {
      if (existing.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        bus.publish(A2aEvent.message(statusMessage(existing, `task ${existing.id} is not waiting for input: wait for it to end (tasks/get), or cancel it (tasks/cancel)`)));
        return;
      }
      bus.publish(A2aEvent.task(existing));
      const run = this.#context.paused.take(approvalKey(existing.id));
      if (!run) return publisher.end(TaskState.TASK_STATE_FAILED, "no run waits for this answer any more: it was not given within --pending-ttl, or the server restarted; send the task again");
      const allowed = YES.test(textOf(message));
      publisher.status(TaskState.TASK_STATE_WORKING, allowed ? `approved: running ${run.waitingApproval?.tool ?? "the tool"}` : `refused: ${run.waitingApproval?.tool ?? "the tool"} does not run`);
      return this.#drive(request, publisher, { ...specOf(run.model, "", ids.taskId), stream: true }, requestContext, { continuing: { run, resume: (paused) => paused.answerApproval(allowed) } });
    }
    bus.publish(A2aEvent.task(submittedTask(ids, message)));
    const model = this.#skillOf(message, requestContext);
    if (typeof model === "string") return publisher.end(TaskState.TASK_STATE_REJECTED, model);
    const input = messageInput(message, model);
    if ("refused" in input) return publisher.end(TaskState.TASK_STATE_REJECTED, input.refused);
    publisher.status(TaskState.TASK_STATE_WORKING, undefined);
    await this.#drive(request, publisher, { ...specOf(model, input.input, ids.taskId, input.media), stream: streaming }, requestContext, {});
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const run = this.#running.get(taskId);
    if (!run) return;
    const paused = this.#context.paused.take(approvalKey(taskId));
    run.abort(new CancelledByClient("interrupted", "the client cancelled the task"));
    if (paused) {
      // No request carries it: this one says how it ended.
      await run.done;
      const task = this.#tasks.get(taskId);
      if (task) new TaskPublisher(bus, { taskId, contextId: task.contextId }, false).end(TaskState.TASK_STATE_CANCELED, "the client cancelled the task");
    }
  };

  /** The served tactic the message asks for: its `metadata.skill`, or the one served; a reason when none fits. */
  #skillOf(message: Message, requestContext: RequestContext): ServedModel | string {
    const named = message.metadata?.skill ?? requestContext.request.metadata?.skill;
    const models = this.#context.models;
    if (typeof named === "string") return models.get(named) ?? `no skill \`${named}\`: this agent's skills are ${models.ids.map((id) => `\`${id}\``).join(", ")}`;
    const all = models.list();
    if (all.length === 1) return all[0]!;
    return `this agent has ${all.length} skills (${models.ids.map((id) => `\`${id}\``).join(", ")}): name one in the message's metadata, {"skill": "…"}`;
  }

  /** Run (or go on with) the task's run until it pauses for approval or ends, publishing as it goes. */
  async #drive(request: RouteRequest, publisher: TaskPublisher, spec: RunSpec, requestContext: RequestContext, options: Pick<RunRequestOptions, "continuing">): Promise<void> {
    const redactor = new StreamRedactor();
    let result: { run: RunHandle; outcome: RunOutcome };
    try {
      result = await runRequest(request, this.#context, spec, {
        ...options,
        listener: {
          text: (delta) => publisher.chunk(redactor.push(delta)),
          event: (event) => {
            // A reply's text is whole: what the redactor held back goes before the reply's tool calls are told.
            if (event.type === "model_reply") publisher.chunk(redactor.flush());
            publisher.toolCalls(event);
          },
        },
        onAdmitted: (run) => {
          this.#running.set(publisher.taskId, run);
          void run.done.then(() => this.#running.delete(publisher.taskId));
        },
        approvalId: approvalKey(publisher.taskId),
        askApproval: true,
        cancelOnClose: requestContext.request.configuration?.returnImmediately !== true,
      });
    } catch (error) {
      // Refused before it ran (the server is full or stopping, a bad limit): the task fails with the reason.
      if (error instanceof HttpError) return publisher.end(TaskState.TASK_STATE_FAILED, error.message);
      return publisher.end(TaskState.TASK_STATE_FAILED, runErrorToHttp(error, { partialOutput: "", requestId: publisher.taskId, log: this.#context.warn }).message);
    }
    const { run, outcome } = result;
    publisher.chunk(redactor.flush());
    if (outcome.type === "finished") this.#tasks.carriedBy(publisher.taskId, outcome.run.runId);
    if (outcome.type === "approval") return publisher.askApproval(outcome.call);
    if (outcome.type !== "finished") return publisher.end(TaskState.TASK_STATE_FAILED, "internal error: the run paused where it cannot");
    if (outcome.run.ok) {
      const output = outcome.run.result.output;
      publisher.answer(typeof output === "string" ? undefined : output, { whole: answerText(outcome.run), rest: unstreamedRest(outcome.run, run) });
      return publisher.end(TaskState.TASK_STATE_COMPLETED, undefined);
    }
    if (outcome.run.error instanceof CancelledByClient) return publisher.end(TaskState.TASK_STATE_CANCELED, "the client cancelled the task");
    const answer = runErrorToHttp(outcome.run.error, { partialOutput: run.lastText, requestId: publisher.taskId, log: this.#context.warn });
    // A message the tactic cannot take (its input schema) is refused, as a bad request is: the agent did not fail.
    publisher.end(answer.code === "input_invalid" ? TaskState.TASK_STATE_REJECTED : TaskState.TASK_STATE_FAILED, answer.message);
  }
}

function specOf(model: ServedModel, input: string, taskId: string, media?: MediaAttachment[]): RunSpec {
  return { model, conversation: { system: [], turns: [], input, ...(media ? { inputMedia: media } : {}), param: "message" }, stream: true, route: "a2a", responseId: taskId };
}

/** Publishes a task's events on the SDK's bus: status updates, the answer's chunks, the end. */
class TaskPublisher {
  readonly #bus: ExecutionEventBus;
  readonly #ids: { taskId: string; contextId: string };
  readonly #streaming: boolean;
  #streamed = false;

  constructor(bus: ExecutionEventBus, ids: { taskId: string; contextId: string }, streaming: boolean) {
    this.#bus = bus;
    this.#ids = ids;
    this.#streaming = streaming;
  }

  get taskId(): string {
    return this.#ids.taskId;
  }

  status(state: TaskState, text: string | undefined, metadata?: Record<string, unknown>): void {
    const task = { id: this.#ids.taskId, contextId: this.#ids.contextId };
    this.#bus.publish(A2aEvent.statusUpdate({ ...this.#ids, status: { state, message: text === undefined ? undefined : statusMessage(task, text, metadata), timestamp: new Date().toISOString() }, metadata: {} }));
  }

  /** A model's reply that calls tools: one status message per call (redacted). */
  toolCalls(event: AgentEvent): void {
    if (event.type !== "model_reply") return;
    for (const call of event.toolCalls) {
      const args = redactSecrets(typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments));
      this.status(TaskState.TASK_STATE_WORKING, `calling ${call.name} ${args}`, { tool_call: { name: call.name, arguments: args, agent: event.agent } });
    }
  }

  /** A piece of the answer as it streams (when the client streams): appended to the `answer` artifact. */
  chunk(text: string): void {
    if (!this.#streaming || text === "") return;
    this.#artifact([textPart(text)], this.#streamed, false);
    this.#streamed = true;
  }

  /** The answer's end, the artifact's last chunk: the rest of its text when it streamed, else the whole answer (a structured one as data). */
  answer(value: unknown, text: { whole: string; rest: string }): void {
    if (this.#streamed) return this.#artifact([textPart(text.rest)], true, true);
    this.#artifact([value !== undefined ? dataPart(value) : textPart(text.whole)], false, true);
  }

  askApproval(call: ApprovalCall): void {
    const args = redactSecrets(JSON.stringify(call.arguments));
    this.status(TaskState.TASK_STATE_INPUT_REQUIRED, `The tool ${call.tool} needs your approval to run with ${args}. Answer yes to run it, or no to refuse it.`, { approval: { tool: call.tool, arguments: args, ...(call.agent !== undefined ? { agent: call.agent } : {}) } });
  }

  end(state: TaskState, text: string | undefined): void {
    this.status(state, text === undefined ? undefined : redactSecrets(text));
  }

  #artifact(parts: ReturnType<typeof textPart>[], append: boolean, lastChunk: boolean): void {
    this.#bus.publish(A2aEvent.artifactUpdate({ ...this.#ids, artifact: { artifactId: "answer", name: "answer", description: "", parts, metadata: undefined, extensions: [] }, append, lastChunk, metadata: undefined }));
  }
}
