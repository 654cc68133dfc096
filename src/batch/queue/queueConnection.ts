import { ConfigError } from "../../errors.js";

/** Redis keys shared by producers and workers (BullMQ's own keys live under `bull:`). */
export const BATCHES_KEY = "lllm:batches";
export const batchKey = (batchId: string): string => `lllm:batch:${batchId}`;
export const queueName = (batchId: string): string => `lllm-batch-${batchId}`;

/** What a producer tells workers about its batch (a Redis hash). */
export interface BatchAnnouncement {
  batchId: string;
  /** The tactic as the user named it (a file or a package ref), and its absolute file on the producer's machine. */
  tactic: string;
  tacticFile: string;
  /** `--package` folders and `--model`, so that a worker prepares the same tactic. */
  packages: string[];
  model: string | null;
  /** The resolved configuration's digest: a worker runs items only when its own copy has the same. */
  digest: string;
  vars: Record<string, string>;
  maxSteps: number | null;
  timeout: number | null;
  approve: "all" | "none";
}

/** One job: an item of the batch. */
export interface QueueItem {
  id: string;
  index: number;
  input: unknown;
  vars: Record<string, string>;
}

/** `--queue redis://host:port[/db]`, checked before anything connects. */
export function queueConnection(url: string, flag = "--queue"): { url: string; maxRetriesPerRequest: null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError("usage_queue", `${flag} \`${url}\` is not a URL`, { location: { file: flag }, hint: "e.g. --queue redis://127.0.0.1:6379" });
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new ConfigError("usage_queue", `${flag} must be a redis:// or rediss:// URL (got \`${parsed.protocol}\`)`, { location: { file: flag }, hint: "e.g. --queue redis://127.0.0.1:6379" });
  // maxRetriesPerRequest null: BullMQ's blocking commands wait across a Redis restart instead of failing.
  return { url, maxRetriesPerRequest: null };
}

/** A BullMQ job id for an item id: any text, but BullMQ refuses `:` and integers. */
export function jobIdOf(itemId: string): string {
  return `i-${Buffer.from(itemId, "utf8").toString("base64url")}`;
}

export async function loadBullmq(): Promise<typeof import("bullmq")> {
  try {
    return await import("bullmq");
  } catch (error) {
    throw new ConfigError("queue_unavailable", `--queue needs the bullmq package, which cannot be loaded: ${(error as Error).message}`, { hint: "Reinstall lllm (npm install) so that its dependencies are complete." });
  }
}
