import type { Redis } from "ioredis";
import { LllmError } from "../../errors.js";
import { queueConnection, redactQueueUrl } from "./queueConnection.js";

export interface RedisLinkOptions {
  url: string;
  /** How long Redis may stay unreachable (at the start or later) before the link fails. */
  reconnectMs: number;
  /** Told at once when Redis cannot be reached or is lost, and when it is back. */
  warn: (message: string) => void;
  say: (message: string) => void;
}

/**
 * One Redis client and what the user must know about it. ioredis reconnects by itself (with the backoff of
 * `queueConnection`) and, with `maxRetriesPerRequest: null`, holds commands until Redis is back, however long:
 * that is what carries a batch across a Redis restart, and what made a dead Redis a silent hang. The link says at
 * once that Redis is unreachable (or refuses the password), says when it is back, and fails (`failed` aborts, with an
 * `LllmError` as its reason) when it stays away longer than `reconnectMs`, or at once when the password is wrong.
 */
export class RedisLink {
  readonly client: Redis;
  readonly #options: RedisLinkOptions;
  readonly #failed = new AbortController();
  #up = false;
  #everUp = false;
  #lost = false;
  #timer: NodeJS.Timeout | undefined;
  #lastError = "";
  #downWaiters: Array<() => void> = [];

  private constructor(client: Redis, options: RedisLinkOptions) {
    this.client = client;
    this.#options = options;
    client.on("ready", () => this.#onReady());
    client.on("error", (error: Error) => this.#onError(error));
    client.on("close", () => this.#onDown());
    // Before the first connection too: a Redis that never answers fails the command after `reconnectMs`.
    this.#arm();
  }

  /** Open a client on `url` (checked with `queueConnection`). Connecting goes on in the background. */
  static async open(options: RedisLinkOptions): Promise<RedisLink> {
    const { Redis } = await import("ioredis");
    const connection = queueConnection(options.url);
    return new RedisLink(new Redis(options.url, { maxRetriesPerRequest: null, retryStrategy: connection.retryStrategy }), options);
  }

  /** The URL as it may be printed: its password masked. */
  get shownUrl(): string {
    return redactQueueUrl(this.#options.url);
  }

  /** Aborted, with an `LllmError` as its reason, once the link gives up on Redis. */
  get failed(): AbortSignal {
    return this.#failed.signal;
  }

  get isUp(): boolean {
    return this.#up;
  }

  /** Resolves once Redis answers; rejects when the link fails first, or with `signal`'s reason (Ctrl-C). */
  async ready(signal?: AbortSignal): Promise<void> {
    if (this.#up) return;
    await this.guard(
      new Promise<void>((resolve) => this.client.once("ready", () => resolve())),
      signal,
    );
  }

  /**
   * `promise` (a Redis command), or a rejection as soon as the link fails or `signal` aborts: a command sent while
   * Redis is away waits for it, and nothing may wait longer than the link does.
   */
  guard<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
    const signals = signal ? [this.#failed.signal, signal] : [this.#failed.signal];
    const aborted = signals.find((each) => each.aborted);
    if (aborted) {
      promise.catch(() => undefined);
      return Promise.reject(aborted.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (event: Event): void => {
        cleanup();
        reject((event.target as AbortSignal).reason);
      };
      const cleanup = (): void => {
        for (const each of signals) each.removeEventListener("abort", onAbort);
      };
      for (const each of signals) each.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (value) => {
          cleanup();
          resolve(value);
        },
        (error: unknown) => {
          cleanup();
          reject(error);
        },
      );
    });
  }

  /** Resolves as soon as Redis is away (at once when it is now): what waits on Redis should stop waiting then. */
  whenDown(): Promise<void> {
    if (!this.#up) return Promise.resolve();
    return new Promise((resolve) => this.#downWaiters.push(resolve));
  }

  /** Let go of Redis at once: nothing waits for an answer (a dead Redis would never give one). */
  close(): void {
    clearTimeout(this.#timer);
    this.client.disconnect();
  }

  #onReady(): void {
    this.#up = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lost) this.#options.say(`Redis at ${this.shownUrl} is back`);
    this.#lost = false;
    this.#everUp = true;
  }

  #onError(error: Error): void {
    const message = error.message ?? String(error);
    if (/^(WRONGPASS|NOAUTH)\b/.test(message)) return this.#fail(authError(this.shownUrl, message));
    if (message === this.#lastError && this.#lost) return;
    this.#lastError = message;
    if (!this.#up && !this.#lost && !this.#failed.signal.aborted) {
      this.#lost = true;
      const seconds = formatSeconds(this.#options.reconnectMs);
      this.#options.warn(this.#everUp ? `lost Redis at ${this.shownUrl} (${message}); trying again for up to ${seconds}` : `cannot reach Redis at ${this.shownUrl} (${message}); trying again for up to ${seconds}`);
    }
  }

  #onDown(): void {
    if (!this.#up) return;
    this.#up = false;
    for (const resolve of this.#downWaiters.splice(0)) resolve();
    this.#arm();
  }

  /** Start the countdown to giving up (once per outage). */
  #arm(): void {
    if (this.#timer !== undefined || this.#failed.signal.aborted) return;
    this.#timer = setTimeout(() => {
      const seconds = formatSeconds(this.#options.reconnectMs);
      const what = this.#everUp ? `lost Redis at ${this.shownUrl} and could not reach it again within ${seconds}` : `cannot reach Redis at ${this.shownUrl} (tried for ${seconds})`;
      this.#fail(
        new LllmError("queue_unreachable", `${what}${this.#lastError ? `: ${this.#lastError}` : ""}`, {
          hint: "Start Redis, or fix the host and port of --queue; LLLM_QUEUE_RECONNECT_MS sets how long to keep trying (milliseconds).",
        }),
      );
    }, this.#options.reconnectMs);
    // The countdown alone must not keep a finished process alive.
    this.#timer.unref();
  }

  #fail(error: LllmError): void {
    if (this.#failed.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#up = false;
    for (const resolve of this.#downWaiters.splice(0)) resolve();
    this.#failed.abort(error);
    // Stop reconnecting: nothing more will be sent.
    this.client.disconnect();
  }
}

function authError(shownUrl: string, reply: string): LllmError {
  const missing = reply.startsWith("NOAUTH");
  return new LllmError("queue_auth", missing ? `Redis at ${shownUrl} needs a password` : `Redis at ${shownUrl} refuses the password (${reply.split(" ")[0]})`, {
    hint: "Give the password in the URL: --queue redis://:PASSWORD@host:port (or redis://USER:PASSWORD@host:port with Redis users).",
  });
}

function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
