import type { Message } from "../../agent/index.js";
import { RunSpool } from "../../store/RunSpool.js";
import type { HeldStore } from "../../store/HeldStore.js";
import { redactSecrets } from "../../util/redact.js";
import type { RunHandle } from "../RunHandle.js";

/** A response of the Responses API as kept: its wire object, and the dialog a later request continues. */
export interface KeptResponse {
  id: string;
  model: string;
  /** The wire object as last sent (`GET /v1/responses/{id}`). */
  body: Record<string, unknown>;
  /** The dialog after it, for `previous_response_id`; absent while the response is in progress. */
  history?: Message[];
}

/** How many responses are kept in memory; older ones are read back from the run store. */
const IN_MEMORY = 10_000;

/**
 * The responses kept (`store: true`, the default), by id: in memory, and in the run store (`served_responses`,
 * redacted) so that `previous_response_id` and `GET /v1/responses/{id}` work after a restart. Also the runs of the
 * responses in progress, for `POST /v1/responses/{id}/cancel`.
 */
export class ServedResponses {
  readonly #byId = new Map<string, KeptResponse>();
  readonly #deleted = new Set<string>();
  readonly #running = new Map<string, RunHandle>();
  /** The run store, when runs are recorded. */
  readonly #store: HeldStore | undefined;
  readonly #warn: (message: string) => void;

  constructor(options: { store?: HeldStore; warn: (message: string) => void }) {
    this.#store = options.store;
    this.#warn = options.warn;
  }

  get(id: string): KeptResponse | undefined {
    if (this.#deleted.has(id)) return undefined;
    return this.#byId.get(id) ?? this.#fromStore(id);
  }

  save(response: KeptResponse): void {
    this.#byId.delete(response.id);
    this.#byId.set(response.id, response);
    if (this.#byId.size > IN_MEMORY) this.#byId.delete(this.#byId.keys().next().value!);
    if (response.history === undefined || this.#store === undefined) return;
    // Only complete responses are written: one in progress lives in memory, and a restart ends it anyway.
    const spool = RunSpool.of(this.#store.file);
    try {
      spool.append({ response: { id: response.id, run: null, createdAt: Date.now(), body: redactSecrets(JSON.stringify({ model: response.model, body: response.body })), history: redactSecrets(JSON.stringify(response.history)) } }, { now: true });
    } catch (error) {
      spool.warnOnce(this.#warn, `responses cannot be kept in the run store: ${(error as Error).message}; they are kept in memory only`);
    }
  }

  delete(id: string): boolean {
    const known = this.get(id) !== undefined;
    if (!known) return false;
    this.#byId.delete(id);
    // Not read back from the store, whose copy goes when the spool's deletion is merged. Known ids only: a client
    // deleting made-up ids without end would grow this set for the server's life.
    this.#deleted.add(id);
    if (this.#store !== undefined) {
      try {
        RunSpool.of(this.#store.file).append({ responseDeleted: { id } }, { now: true });
      } catch {
        // Deleted here; the store keeps it until it can be written to.
      }
    }
    return true;
  }

  /** The run answering a response (in flight, or waiting for its function calls' outputs). */
  running(id: string): RunHandle | undefined {
    return this.#running.get(id);
  }

  track(id: string, run: RunHandle | undefined): void {
    if (run) this.#running.set(id, run);
    else this.#running.delete(id);
  }

  #fromStore(id: string): KeptResponse | undefined {
    if (this.#store === undefined || !/^resp_[0-9a-f]+$/.test(id)) return undefined;
    const row = this.#store.read((store) => store.getResponse(id));
    if (!row) return undefined;
    const { model, body } = JSON.parse(row.body) as { model: string; body: Record<string, unknown> };
    const kept: KeptResponse = { id, model, body, ...(row.history !== null ? { history: JSON.parse(row.history) as Message[] } : {}) };
    this.#byId.set(id, kept);
    return kept;
  }
}
