import type { Message } from "../../agent/index.js";

/** A response of the Responses API as kept: its wire object, and the dialog a later request continues. */
export interface KeptResponse {
  id: string;
  model: string;
  /** The wire object as last sent (`GET /v1/responses/{id}`). */
  body: Record<string, unknown>;
  /** The dialog after it, for `previous_response_id`; absent while the response is in progress. */
  history?: Message[];
  runId?: string;
}

/** The responses kept (`store: true`, the default), by id. */
export class ServedResponses {
  readonly #byId = new Map<string, KeptResponse>();

  get(id: string): KeptResponse | undefined {
    return this.#byId.get(id);
  }

  save(response: KeptResponse): void {
    this.#byId.set(response.id, response);
  }

  delete(id: string): boolean {
    return this.#byId.delete(id);
  }
}
