import type { Redis } from "ioredis";
import { runningKey, waitingKey } from "./serveQueueWire.js";

/** How long one wait for a job blocks (seconds): a stop waits at most this for the wait under way to return. */
const BLOCK_SECONDS = 1;

/**
 * A job taken as the worker stops goes back to the waiting list in one step: a server looking for lost jobs (after a
 * Redis restart) must not find it on neither list and queue it a second time.
 */
const GIVE_BACK_SCRIPT = "if redis.call('lrem', KEYS[1], 1, ARGV[1]) == 1 then redis.call('rpush', KEYS[2], ARGV[1]) end return 0";

/**
 * Takes the served requests of one tactic off its list (`waitingKey`), up to `concurrency` at once, for one worker.
 * Each job is moved, in the same step, to this worker's list of the tactic (`runningKey`), where it stays until
 * `run` resolves (the run paused or ended), so the pool's running requests can be counted. A served request is run
 * once and leaves nothing (a server replaces a run whose worker died), so BullMQ's states, locks and events, two Lua
 * scripts a request, are more than it needs: a list and one blocking move are all (issue 35's throughput).
 */
export class JobTaker {
  readonly #blocking: Redis;
  readonly #commands: Redis;
  readonly #waiting: string;
  readonly #running: string;
  readonly #concurrency: number;
  readonly #aliveMs: number;
  readonly #run: (text: string) => Promise<void>;
  #busy = 0;
  /** The jobs running, as taken: put on the running list again if Redis lost it (`restore`). */
  readonly #texts = new Set<string>();
  #restoring: Promise<void> = Promise.resolve();
  #stopping = false;
  #slotFree: (() => void) | undefined;
  readonly #loop: Promise<void>;

  /**
   * `blocking` is a connection of its own (a blocked command holds it); `commands` sends the rest (auto-pipelined:
   * the list's upkeep goes out with the run's events). `aliveMs`: how long a dead worker's list outlives it.
   */
  constructor(options: { blocking: Redis; commands: Redis; digest: string; me: string; concurrency: number; aliveMs: number; run: (text: string) => Promise<void>; warn: (message: string) => void }) {
    this.#blocking = options.blocking;
    this.#commands = options.commands;
    this.#waiting = waitingKey(options.digest);
    this.#running = runningKey(options.digest, options.me);
    this.#concurrency = options.concurrency;
    this.#aliveMs = options.aliveMs;
    this.#run = options.run;
    this.#loop = this.#take(options.warn);
  }

  /**
   * Keep this worker's list alive (each heartbeat): it expires once the worker is gone, twice as long after its own key
   * (the same `aliveMs`, kept by another timer), so that servers always see the list of a worker they find gone and
   * take its jobs back: a list that expired first would lose a job taken just before a SIGKILL.
   */
  touch(): void {
    void this.kept();
  }

  /**
   * `touch`, and whether the list was there: false when jobs run here and Redis no longer holds their list (it lost
   * its data: see `restore`).
   */
  async kept(): Promise<boolean> {
    const found = await this.#commands.pexpire(this.#running, 2 * this.#aliveMs).catch(() => undefined);
    // Read when Redis answered: a job that ended meanwhile took its text off first, and its list may be gone with it.
    return found !== 0 || this.#texts.size === 0;
  }

  /**
   * Redis lost this worker's list (it restarted without its data): put the jobs running here on it again, so that
   * servers see them taken (not lost, nor queued again).
   */
  restore(): Promise<void> {
    // One after the other: two at once would both find a job missing, and put it back twice.
    const restored = this.#restoring.then(async () => {
      const listed = new Set(await this.#commands.lrange(this.#running, 0, -1));
      const missing = [...this.#texts].filter((text) => !listed.has(text));
      if (missing.length > 0) await this.#commands.lpush(this.#running, ...missing);
      if (this.#texts.size > 0) this.touch();
    });
    this.#restoring = restored.catch(() => undefined);
    return restored;
  }

  /** Take no more jobs; resolves once the wait under way has returned (a job it brought goes back to the list). */
  async close(): Promise<void> {
    this.#stopping = true;
    this.#slotFree?.();
    await this.#loop;
    this.#blocking.disconnect();
  }

  /** Let go at once (Redis is away, or the worker is ending): nothing waits for the blocked command to return. */
  disconnect(): void {
    this.#stopping = true;
    this.#slotFree?.();
    this.#blocking.disconnect();
  }

  async #take(warn: (message: string) => void): Promise<void> {
    let failing = false;
    while (!this.#stopping) {
      if (this.#busy >= this.#concurrency) {
        await new Promise<void>((resolve) => (this.#slotFree = resolve));
        this.#slotFree = undefined;
        continue;
      }
      let text: string | null;
      try {
        text = await this.#blocking.blmove(this.#waiting, this.#running, "RIGHT", "LEFT", BLOCK_SECONDS);
        failing = false;
      } catch (error) {
        // Redis away: the link says so (and gives up in time); try again shortly.
        const message = (error as Error).message;
        if (!failing) warn(`could not take a served request from Redis: ${message}${/unknown command/i.test(message) ? " (lllm serve --queue needs Redis 6.2 or later)" : ""}`);
        failing = true;
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      if (text === null) continue;
      if (this.#stopping) {
        // Taken as the worker stops: back at the head of the list, for another worker; unless a server took it back
        // already (this worker's heartbeat is gone: see QueueBridge's `reclaim`), which runs it again itself.
        await this.#commands.eval(GIVE_BACK_SCRIPT, 2, this.#running, this.#waiting, text).catch(() => undefined);
        break;
      }
      // With no job running, the list was empty, so Redis made it anew, without a time to live: it gets one now (a
      // list with jobs keeps its own), so that a worker that dies leaves nothing for long.
      if (this.#busy === 0) this.touch();
      this.#busy++;
      this.#texts.add(text);
      void this.#run(text)
        .catch(() => undefined)
        .finally(() => {
          this.#busy--;
          this.#texts.delete(text);
          void this.#commands.lrem(this.#running, 1, text).catch(() => undefined);
          this.#slotFree?.();
        });
    }
  }
}
