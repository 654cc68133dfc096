/**
 * A stored answer: the live reply body, the provider's error for that one request, or why lllm gave the request up
 * (its job could not be submitted, or ended without answering it too many times).
 */
export type StoredAnswer = { reply: unknown } | { error: { status?: number; message: string } } | { failed: string };

/** What the store knows of one request of an item: its answer, the job it is in, how many times it was submitted. */
export interface KnownRequest {
  answer?: StoredAnswer;
  jobId?: string;
  attempts: number;
}

/**
 * What the store knows of an item when an attempt of it starts: its requests (by custom id) and the kept outcomes
 * of its tool calls (by `ToolJournal` key). Read in one go (for a chunk of parked items, with a few queries for all
 * of them), so that an attempt asks the store nothing per turn or per call.
 */
export interface ItemHistory {
  requests: ReadonlyMap<string, KnownRequest>;
  tools: ReadonlyMap<string, string>;
}

/** An item the store knows nothing of (its first attempt, in a run whose store had nothing for its --out file). */
export const EMPTY_HISTORY: ItemHistory = { requests: new Map(), tools: new Map() };
