import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; // Crockford's base 32, as ULID uses

/**
 * A ULID: 10 characters of milliseconds since the epoch, then 16 random ones. Sorting ids as text sorts runs by
 * start time, which `lllm logs` and `last` rely on.
 */
export function newRunId(now = Date.now()): string {
  let time = "";
  let rest = now;
  for (let index = 0; index < 10; index += 1) {
    time = ALPHABET[rest % 32]! + time;
    rest = Math.floor(rest / 32);
  }
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let random = "";
  for (let index = 0; index < 16; index += 1) random += ALPHABET[pool[poolOffset + index]! % 32]!;
  poolOffset += 16;
  return time + random;
}

/** Random bytes drawn 4 KiB at a time: a batch makes an id per item, and each draw from the system costs a call. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
