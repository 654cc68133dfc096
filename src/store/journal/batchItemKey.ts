import { createHash } from "node:crypto";
import path from "node:path";

/**
 * The key of a batch item's runs in the run store (`runs.batch_item`): its `--out` file and its id, so that the same
 * batch run again (the same command, the same --out; a queue worker taking the item again) finds the run of an item
 * that stopped mid-way and resumes it. The file is kept as a digest of its absolute path: the keys of one batch
 * share a prefix (`batchItemPrefix`), read as one range of an index.
 */
export function batchItemKey(out: string, itemId: string): string {
  return `${batchItemPrefix(out)}${itemId}`;
}

/** What the keys of the items of one `--out` file start with. */
export function batchItemPrefix(out: string): string {
  return `${createHash("sha256").update(path.resolve(out)).digest("hex").slice(0, 16)}:`;
}
