import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; // Crockford's base 32, as ULID uses

/**
 * A ULID: 10 characters of milliseconds since the epoch, then 16 random ones. Sorting ids as text sorts runs by
 * start time, which `lllm logs` and `last` rely on: an id made in the same millisecond as this process's previous
 * one is that id plus one (as ULID's monotonic ids are), so that ids made in a row sort in the order they were made.
 */
export function newRunId(now = Date.now()): string {
  let time = "";
  let rest = now;
  for (let index = 0; index < 10; index += 1) {
    time = ALPHABET[rest % 32]! + time;
    rest = Math.floor(rest / 32);
  }
  const random = now === last.time ? increment(last.random) : fresh();
  last = { time: now, random };
  return time + random;
}

/** The id made last (its milliseconds and its random part). */
let last = { time: -1, random: "" };

function fresh(): string {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let random = "";
  for (let index = 0; index < 16; index += 1) random += ALPHABET[pool[poolOffset + index]! % 32]!;
  poolOffset += 16;
  return random;
}

/** `random` plus one, in base 32; all Zs (one chance in 2^80) wraps to a fresh one. */
function increment(random: string): string {
  const digits = [...random];
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    const value = ALPHABET.indexOf(digits[index]!);
    if (value < 31) {
      digits[index] = ALPHABET[value + 1]!;
      return digits.join("");
    }
    digits[index] = ALPHABET[0]!;
  }
  return fresh();
}

/** Random bytes drawn 4 KiB at a time: a batch makes an id per item, and each draw from the system costs a call. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
