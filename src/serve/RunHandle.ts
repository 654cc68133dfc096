import type { RecordedRun } from "../run/runRecorded.js";
import type { ServedModel } from "./ServedModels.js";
import type { AgentEvent } from "../agent/index.js";

/** A call of a client's tool, as the client is told of it: its id on the wire, the tool, the model's arguments. */
export interface ClientCall {
  id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

/** A call that waits for the client's approval (`askApproval`): the tool, its arguments, the agent that calls it. */
export interface ApprovalCall {
  tool: string;
  arguments: Record<string, unknown>;
  agent?: string;
}

/**
 * What a request of a run gets: the run paused at its client's tool calls, paused at a call that needs the client's
 * approval (only with `askApproval`), or its end.
 */
export type RunOutcome = { type: "paused"; calls: ClientCall[]; text: string } | { type: "approval"; call: ApprovalCall } | { type: "finished"; run: RecordedRun };

/** Where the answer's text (and, for protocols that show progress, the run's agent events) go, for the request being answered. */
export interface RunListener {
  text?(delta: string): void;
  event?(event: AgentEvent): void;
}

/**
 * A served run as the protocols see it, wherever it runs: in this process (`ServedRun`), or on a worker of the
 * queue (`RemoteRun`, `lllm serve --queue`). Routes translate its outcomes; they never know where it ran.
 */
export interface RunHandle {
  readonly model: ServedModel;
  /** What the entry agent said last, for an error that stops the run before its answer. */
  readonly lastText: string;
  /** The text streamed of the final answer so far. */
  readonly streamedSinceCall: string;
  /** Tokens so far (the whole run's once it ended: see `finished`). */
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  /** The run's end, once it ended. */
  readonly finished: RecordedRun | undefined;
  /** Settles with the run's end, however it ends. */
  readonly done: Promise<RecordedRun>;
  /** The client's calls the run waits for. */
  readonly waitingFor: ClientCall[];
  /** The call waiting for the client's approval, if any. */
  readonly waitingApproval: ApprovalCall | undefined;
  start(): void;
  /** The next pause or the end, with `listener` receiving the text streamed until then. */
  next(listener: RunListener | undefined): Promise<RunOutcome>;
  /** Go on with the client's results, by the ids it was given. */
  resume(results: ReadonlyMap<string, string>): void;
  /** The ids of the calls the run waits for that `results` lacks. */
  missingResults(results: ReadonlyMap<string, string>): string[];
  /** Go on past the call waiting for approval. */
  answerApproval(allowed: boolean): void;
  /** Cancel the run (its record says interrupted). */
  abort(reason: unknown): void;
}
