import { createHash } from "node:crypto";

/**
 * The key of a batch item's runs in the run store (`runs.batch_item`): its batch's scope (the absolute path of its
 * `--out` file; a queued batch without one: `batch <id>`) and its id, so that the same batch run again (the same
 * command, the same --out; a queue worker taking the item back) finds the run of an item that stopped mid-way and
 * resumes it. The scope is kept as a digest: the keys of one batch share a prefix (`batchItemPrefix`), read as one
 * range of an index.
 */
export function batchItemKey(scope: string, itemId: string): string {
  return `${batchItemPrefix(scope)}${itemId}`;
}

/** What the keys of the items of one scope start with. */
export function batchItemPrefix(scope: string): string {
  return `${createHash("sha256").update(scope).digest("hex").slice(0, 16)}:`;
}
