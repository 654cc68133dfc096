import type { Redis } from "ioredis";
import type { ApprovalCall, ClientCall } from "../RunHandle.js";
import type { ServedRunOptions } from "../ServedRun.js";
import type { WireRecordedRun } from "./wireRecordedRun.js";

/**
 * What `lllm serve --queue` and its workers say to each other through Redis. A list per served tactic carries the
 * requests (a job per run: `waitingKey`, and each worker's `runningKey` while it runs it); pub/sub carries the rest,
 * each message on the channel of the one process it is for: a run's events to the server waiting for it, commands to
 * the worker running it. Keys with a time to live say who is alive: servers (`serverKey`), workers (the batch
 * workers' own `lllm:worker:<id>`), served tactics.
 */
/** The digests of the tactics servers announce (a set each server's heartbeat renews: it expires after the last). */
export const SERVE_TACTICS_KEY = "lllm:serve:tactics";
export const tacticKey = (digest: string): string => `lllm:serve:tactic:${digest}`;
/** The jobs of a served tactic no worker took yet (a list: servers push at its head, workers take from its tail). */
export const waitingKey = (digest: string): string => `lllm:serve:waiting:${digest}`;
/** The jobs of a served tactic one worker runs (moved there from `waitingKey`); it expires when the worker is gone. */
export const runningKey = (digest: string, workerId: string): string => `${runningPrefix(digest)}${workerId}`;
export const runningPrefix = (digest: string): string => `lllm:serve:running:${digest}:`;
export const serverKey = (serverId: string): string => `lllm:serve:server:${serverId}`;
export const SERVER_KEY_PREFIX = "lllm:serve:server:";
export const serverChannel = (serverId: string): string => `lllm:serve:events:${serverId}`;
export const workerChannel = (workerId: string): string => `lllm:serve:control:${workerId}`;
/**
 * Why a worker does not run a served tactic (its `Refusal`'s message): written by the worker while it refuses it,
 * renewed each of its heartbeats (it expires once the worker is gone), removed when the worker takes the tactic.
 * Servers fail the requests of a tactic every live worker refuses, and `lllm doctor --queue` reports it.
 */
export const refusalKey = (digest: string, workerId: string): string => `lllm:serve:refused:${digest}:${workerId}`;
/** Set when a run is cancelled before a worker took its job: the worker that takes it drops it. */
export const cancelledKey = (runKey: string): string => `lllm:serve:cancelled:${runKey}`;
/** A client's tool call a paused run waits for: any server that gets its result continues the run. */
export const callKey = (callId: string): string => `lllm:serve:call:${callId}`;
/**
 * How a run stands last (started, paused, ended: a `SettledEvent`), kept a few heartbeats besides its message:
 * pub/sub delivers at most once (a subscriber's connection dropped, its output buffer over Redis's limit), and a
 * server that missed the message reads it here at its next heartbeat instead of waiting for good.
 */
export const settledKey = (runKey: string): string => `lllm:serve:settled:${runKey}`;

/** What a served request asks of its run (see `ServedRunOptions`), the part that goes to a worker as it is. */
type RequestedRun = Pick<ServedRunOptions, "input" | "inputMedia" | "history" | "clientTools" | "toolChoice" | "parallelToolCalls" | "responseFormat" | "modelArgs" | "limits" | "limitSources" | "served">;

/** One served request, as a job: everything a worker needs to start the run. */
export interface ServedJob extends RequestedRun {
  /** The run's key on the wire (a new one for each attempt). */
  runKey: string;
  /** The server waiting for it: events go to its channel. */
  server: string;
  /** The model id it was asked for (the run's record names it). */
  model: string;
  /** The server's --approve all. */
  approveAll: boolean;
  askApproval: boolean;
  stream: boolean;
  log: boolean;
  /** How long the run may wait paused for a client (--pending-ttl), in milliseconds. */
  pendingTtlMs: number;
}

/**
 * What a worker tells the server about a run, in order (pub/sub keeps the order of one connection). How it stands
 * (started, paused, ended) is numbered, `seq`, from 1 for each run, and kept under `settledKey` too: a server takes
 * each number once, from whichever way it comes first.
 */
export type RunEvent =
  | { run: string; type: "started"; worker: string; seq?: number }
  | { run: string; type: "text"; delta: string }
  | { run: string; type: "reply"; agent: string; round: number; text: string; toolCalls: Array<{ id: string; name: string; arguments: string }> }
  | { run: string; type: "paused"; calls: ClientCall[]; text: string; state: RunState; seq?: number }
  | { run: string; type: "approval"; call: ApprovalCall; state: RunState; seq?: number }
  | { run: string; type: "finished"; result: WireRecordedRun; state: RunState; seq?: number }
  /**
   * Its worker stopped it (its drain timed out, or a second signal): as for a dead worker's, the server runs it again
   * on another worker when its client has seen nothing of it, else ends it with `serve_worker_lost`; at once, not
   * heartbeats later. A server from before this event ignores it, and finds the worker gone once it has exited.
   */
  | { run: string; type: "given_back"; worker: string; state: RunState; seq?: number }
  /** Another server took the paused run over (its client's next request landed there). */
  | { run: string; type: "moved" };

/** A run's event that says how it stands, numbered (see `RunEvent`). */
export type SettledEvent = Extract<RunEvent, { type: "started" | "paused" | "approval" | "finished" | "given_back" }>;

/** What `settledKey` holds: the run's last settled event, the worker that runs it, and the server it was for. */
export interface SettledRecord {
  worker: string;
  server: string;
  event: SettledEvent;
}

/** What the server mirrors of a run at each pause or end. */
export interface RunState {
  lastText: string;
  streamedSinceCall: string;
  usage: { promptTokens: number; completionTokens: number };
}

/** What a server tells the worker running a run. */
export type RunCommand =
  | { run: string; type: "cancel"; message: string }
  | { run: string; type: "resume"; results: Array<[string, string]>; server: string }
  | { run: string; type: "approve"; allowed: boolean; server: string };

/** A paused run's call, as a server finds it (`callKey`). */
export interface PausedCall {
  run: string;
  worker: string;
  model: string;
  /** Every call id the run waits for. */
  ids: string[];
  calls: ClientCall[];
  /** The number of the pause (see `RunEvent`): a server that takes the run over has seen it. */
  seq?: number;
}

/**
 * The jobs of a served tactic waiting for a worker, and those its workers run (each live worker's list; a dead
 * worker's expires with it).
 */
export async function servedJobCounts(client: Redis, digest: string): Promise<{ waiting: number; running: number }> {
  const waiting = await client.llen(waitingKey(digest));
  let running = 0;
  for (const key of await scanKeys(client, `${runningPrefix(digest)}*`)) running += await client.llen(key);
  return { waiting, running };
}

/** Every key that matches `pattern` (SCAN, never KEYS: a big Redis keeps answering others meanwhile). */
export async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  return keys;
}
