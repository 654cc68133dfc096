import { randomBytes } from "node:crypto";

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
  const random = [...randomBytes(16)].map((byte) => ALPHABET[byte % 32]!).join("");
  return time + random;
}
