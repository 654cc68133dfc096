import { ProviderError } from "../errors.js";
import { firstLine } from "../util/firstLine.js";
import type { Model, ModelRequest, ModelResponse } from "./Model.js";

/** Said when a chain's model failed and a later one answered instead (`stderr` says it once). */
export interface FallbackNotice {
  /** The model that was asked first. */
  from: string;
  /** The model that answered, and answers the chain's later requests. */
  to: string;
  /** Why each model before `to` failed, in order. */
  failures: Array<{ model: string; error: ProviderError }>;
}

export interface FallbackModelOptions {
  /** The chain, in the order the models are tried. At least one. */
  models: readonly Model[];
  /** Told when a later model answered for one that failed. */
  onFallback?: (notice: FallbackNotice) => void;
}

/**
 * A fallback chain, itself a Model: a request goes to the first model; when it fails in a way its own retries did
 * not mend (a 5xx, a 429 after the retries, a timeout, a refused or lost connection, answers that cannot be used),
 * the next one is asked, with the same dialog, across providers. What the user must fix does not fall back: a
 * rejected key, a bad request (400, 422), a model the provider does not have (404); nor does an answer that was
 * already streamed in part (it would be printed twice), a cancelled run, or a limit of the run. The model that
 * answered is named in the response (`model`), and it answers the chain's later requests: a provider that is down
 * is not asked again (and retried again) on every call of the run.
 */
export class FallbackModel implements Model {
  /** The first model's name: the chain as configured. */
  readonly name: string;
  readonly models: readonly Model[];
  readonly #onFallback: ((notice: FallbackNotice) => void) | undefined;
  #current = 0;

  constructor(options: FallbackModelOptions) {
    if (options.models.length === 0) throw new Error("FallbackModel needs at least one model");
    this.models = options.models;
    this.name = options.models[0]!.name;
    this.#onFallback = options.onFallback;
  }

  /** The model asked first now: the first of the chain until it failed over. */
  get current(): Model {
    return this.models[this.#current]!;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const failures: FallbackNotice["failures"] = [];
    const first = this.#current;
    for (let index = first; ; index += 1) {
      const model = this.models[index]!;
      let delivered = false;
      const onText = request.onText;
      const attempt: ModelRequest = onText
        ? {
            ...request,
            onText: (delta) => {
              delivered = true;
              onText(delta);
            },
          }
        : request;
      try {
        const response = await model.generate(attempt);
        if (index !== first) {
          this.#current = index;
          this.#onFallback?.({ from: this.models[first]!.name, to: model.name, failures });
        }
        return response.model === undefined ? { ...response, model: model.name } : response;
      } catch (error) {
        if (index === this.models.length - 1 || delivered || request.signal?.aborted || !fallsBack(error)) throw error;
        failures.push({ model: model.name, error });
      }
    }
  }
}

/** The provider failures another provider may mend: not the user's (key, request, model name), not a cancel. */
export function fallsBack(error: unknown): error is ProviderError {
  if (!(error instanceof ProviderError)) return false;
  switch (error.code) {
    case "provider_connection":
    case "provider_timeout":
    case "provider_quota":
    case "provider_bad_response":
    case "provider_incomplete_answer":
      return true;
    case "provider_http": {
      const status = (error.cause as { status?: unknown } | undefined)?.status;
      // A request the server refused as such (400, 422, …) gets the same answer elsewhere; 408 and 429 are load.
      return !(typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 429);
    }
    default:
      return false;
  }
}

/** What stderr says when a chain's model took over: once per switch, since the chain stays with it. */
export function fallbackMessage(notice: FallbackNotice): string {
  const why = notice.failures.map((failure) => `${failure.model}: ${firstLine(failure.error.message)}`).join("; ");
  return `${notice.to} answers instead of ${notice.from} from now on (${why})`;
}
