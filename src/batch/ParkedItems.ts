import type { BatchItem } from "./BatchItem.js";

/** What an attempt of an item that parked hands to the next one. */
export interface ParkedRun {
  parked: true;
  /** The run store's record of the item (its first attempt's): later attempts write under it. */
  recordId?: string;
}

/** A parked item, as the batch keeps it until its answer comes. */
export interface ParkedEntry {
  item: BatchItem;
  recordId?: string;
  /** When its first attempt started (`performance.now()`): its result line's duration counts from there. */
  startedAt: number;
}

/**
 * Items that wait for a provider batch job as data, not as suspended runs (`lllm batch --provider-batch`): an
 * attempt that reaches a request without an answer ends (it parks), and the item is kept here with what its next
 * attempt needs; `ready` (its answer came) queues it to run again from its start, before any new item starts.
 */
export class ParkedItems {
  readonly #waiting = new Map<string, ParkedEntry>();
  /** A queue: `#ready` from `#head` on (shift() would move the whole array for each of 100,000 items). */
  #ready: string[] = [];
  #head = 0;
  /** Ids said ready while their attempt was still ending: parked, they are ready at once. */
  readonly #early = new Set<string>();
  /** Told when an item becomes ready (the batch's scheduler wakes up). */
  onReady: (() => void) | undefined;

  /** Items parked and not yet run again (ready ones included). */
  get size(): number {
    return this.#waiting.size;
  }

  /** Whether an item is ready to run again. */
  get hasReady(): boolean {
    return this.#head < this.#ready.length;
  }

  park(entry: ParkedEntry): void {
    this.#waiting.set(entry.item.id, entry);
    if (this.#early.delete(entry.item.id)) this.ready(entry.item.id);
  }

  /** The answer an item waits for came (or was given up): it runs again. */
  ready(itemId: string): void {
    if (!this.#waiting.has(itemId)) {
      this.#early.add(itemId);
      return;
    }
    this.#ready.push(itemId);
    this.onReady?.();
  }

  /** The next item to run again, if one is ready. */
  next(): ParkedEntry | undefined {
    while (this.#head < this.#ready.length) {
      const id = this.#ready[this.#head]!;
      this.#head += 1;
      if (this.#head === this.#ready.length) {
        this.#ready = [];
        this.#head = 0;
      }
      const entry = this.#waiting.get(id);
      if (!entry) continue;
      this.#waiting.delete(id);
      return entry;
    }
    return undefined;
  }

  /** Forget an id said ready early whose item finished after all (its attempt did not park). */
  settled(itemId: string): void {
    this.#early.delete(itemId);
  }
}
