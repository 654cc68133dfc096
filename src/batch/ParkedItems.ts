import type { BatchItem } from "./BatchItem.js";

/** What an attempt of an item that parked hands to the next one. */
export interface ParkedRun {
  parked: true;
  /** The run store's record of the item (its first attempt's): later attempts write under it. */
  recordId?: string;
  /** What its answered turns cost so far (committed, not yet in a result line). */
  cost?: number;
}

/** A parked item, as the batch keeps it until its answer comes. */
export interface ParkedEntry {
  item: BatchItem;
  recordId?: string;
  /** When its first attempt started (`performance.now()`): its result line's duration counts from there. */
  startedAt: number;
  /** See `ParkedRun.cost`. */
  cost?: number;
  /**
   * What the storage read with the item when it was taken to run again, in the storage's own terms (the provider
   * batch's store gives an `ItemHistory`); never stored with it.
   */
  history?: unknown;
}

/**
 * Where parked items wait: on disk (the run store, `BatchJobStore`), so that 100,000 waiting items take no memory.
 * Each call is one transaction.
 */
export interface ParkedStorage {
  park(entries: ReadonlyArray<{ key: string; entry: ParkedEntry }>): void;
  /** Mark these items ready; returns the keys that were parked (and not ready yet). */
  markReady(keys: readonly string[]): string[];
  /** Up to `limit` ready items, the first made ready first, removed from the storage (with their `history`, when it keeps one). */
  takeReady(limit: number): ParkedEntry[];
}

/** Items written to the storage and read from it this many at a time. */
const CHUNK = 200;

/**
 * Items that wait for a provider batch job as data, not as suspended runs (`lllm batch --provider-batch`): an
 * attempt that reaches a request without an answer ends (it parks), and the item is kept (in `storage`) with what
 * its next attempt needs; `ready` (its answer came) queues it to run again from its start, before any new item.
 * Items are named by a key of their id (`keyOf`), as the provider batch names them in its requests.
 */
export class ParkedItems {
  readonly #storage: ParkedStorage;
  readonly #keyOf: (itemId: string) => string;
  /** Parked, not yet written: written together before anything reads the storage. */
  #toPark: Array<{ key: string; entry: ParkedEntry }> = [];
  #parkedCount = 0;
  #readyCount = 0;
  /** Ready items read from the storage, to run next. */
  #taken: ParkedEntry[] = [];
  /** Keys of items whose attempt is running: an answer for one of them may come before it parks. */
  readonly #running = new Set<string>();
  /** Keys said ready while their attempt was still ending: parked, they are ready at once. */
  readonly #early = new Set<string>();
  /** Told when items become ready (the batch's scheduler wakes up). */
  onReady: (() => void) | undefined;

  constructor(storage: ParkedStorage, keyOf: (itemId: string) => string) {
    this.#storage = storage;
    this.#keyOf = keyOf;
  }

  /** Items parked and not yet run again (ready ones included). */
  get size(): number {
    return this.#parkedCount;
  }

  /** Whether an item is ready to run again. */
  get hasReady(): boolean {
    return this.#readyCount > 0;
  }

  /** An attempt of the item starts. */
  started(itemId: string): void {
    this.#running.add(this.#keyOf(itemId));
  }

  /** The attempt ended without parking (the item is done, or cancelled). */
  settled(itemId: string): void {
    const key = this.#keyOf(itemId);
    this.#running.delete(key);
    this.#early.delete(key);
  }

  park(entry: ParkedEntry): void {
    const key = this.#keyOf(entry.item.id);
    this.#running.delete(key);
    this.#parkedCount += 1;
    this.#toPark.push({ key, entry });
    if (this.#early.delete(key)) this.ready([key]);
    else if (this.#toPark.length >= CHUNK) this.#flush();
  }

  /** The answers these items wait for came (or were given up): they run again. */
  ready(keys: readonly string[]): void {
    this.#flush();
    const marked = this.#storage.markReady(keys);
    if (marked.length < keys.length) {
      const parked = new Set(marked);
      for (const key of keys) if (!parked.has(key) && this.#running.has(key)) this.#early.add(key);
    }
    if (marked.length === 0) return;
    this.#readyCount += marked.length;
    this.onReady?.();
  }

  /** The next item to run again, if one is ready. */
  next(): ParkedEntry | undefined {
    if (this.#taken.length === 0 && this.#readyCount > 0) {
      this.#flush();
      // Reversed: pop() takes them in order without moving the rest.
      this.#taken = this.#storage.takeReady(CHUNK).reverse();
    }
    const entry = this.#taken.pop();
    if (entry) {
      this.#readyCount -= 1;
      this.#parkedCount -= 1;
    }
    return entry;
  }

  #flush(): void {
    if (this.#toPark.length === 0) return;
    const entries = this.#toPark;
    this.#toPark = [];
    this.#storage.park(entries);
  }
}

/** Parked items in memory (tests, and a batch without a run store). */
export function memoryParkedStorage(): ParkedStorage {
  const parked = new Map<string, { entry: ParkedEntry; ready: boolean }>();
  const ready: string[] = [];
  return {
    park: (entries) => entries.forEach(({ key, entry }) => parked.set(key, { entry, ready: false })),
    markReady: (keys) =>
      keys.filter((key) => {
        const found = parked.get(key);
        if (!found || found.ready) return false;
        found.ready = true;
        ready.push(key);
        return true;
      }),
    takeReady: (limit) =>
      ready.splice(0, limit).map((key) => {
        const { entry } = parked.get(key)!;
        parked.delete(key);
        return entry;
      }),
  };
}
