import { randomFillSync } from "node:crypto";

const ID_BYTES = 12;
/**
 * Random bytes for ids, drawn from the system's generator 256 ids at a time: a served request takes several ids, and
 * one call to the generator per id cost more than the rest of making them.
 */
const pool = Buffer.alloc(ID_BYTES * 256);
let used = pool.length;

/** A fresh id for an object on the wire: `chatcmpl-…`, `resp_…`, `msg_…`. */
export function newWireId(prefix: string): string {
  if (used + ID_BYTES > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const id = pool.toString("hex", used, used + ID_BYTES);
  used += ID_BYTES;
  return `${prefix}${id}`;
}
