import { LllmError } from "../../errors.js";

/**
 * The worker running a served request stopped (killed, its machine lost) after part of the answer had reached the
 * client: the request cannot be run again unseen. The client reads it as a 502 and may send the request again.
 */
export class WorkerLostError extends LllmError {
  readonly worker: string;
  /** How much of the answer its client had (the client is told this, not the worker's name). */
  readonly streamedCharacters: number;

  constructor(worker: string, streamedCharacters: number) {
    super("serve_worker_lost", `the worker running this request (${worker}) stopped before the answer was complete${streamedCharacters > 0 ? ` (${streamedCharacters} characters of it had been sent)` : ""}; send the request again`, {
      hint: "Another worker takes the request when it is sent again; `lllm doctor --queue URL` lists the live workers.",
    });
    this.worker = worker;
    this.streamedCharacters = streamedCharacters;
  }
}
