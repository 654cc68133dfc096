import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { isSecretName, redactSecrets } from "../util/redact.js";

/** What is written over a hidden value: as long as the value, so nothing else in the block moves. */
const FILL = 0x2a; // "*"

/**
 * Hide the credentials of lllm's own environment from other processes of the same user, before code runs outside a
 * sandbox (`backend: none`): on Linux any process of the user reads `/proc/<lllm's pid>/environ`, which is the
 * block of `NAME=value` strings the kernel put on lllm's stack at exec, not `process.env` (deleting a variable
 * changes nothing there). So each credential (a variable named like one, or holding a secret lllm registered) is
 * first copied to the heap (setting `process.env[name]` again makes the C library point at a copy, and lllm keeps
 * reading the same value), then its bytes in the block are overwritten through `/proc/self/mem`, which a process
 * may write in its own memory. This closes `/proc/<pid>/environ`, not everything: memory is readable by a process
 * that may trace lllm (same user, unless the kernel's Yama ptrace_scope forbids it, or root), and the user's own
 * files stay readable; see docs/code-action.md on `backend: none`.
 *
 * Returns undefined when the block holds no credential (any more), else why it could not be hidden. Not Linux:
 * there is no such block to read (undefined).
 */
export function hideEnvironmentSecrets(): string | undefined {
  if (process.platform !== "linux") return undefined;
  let block: { start: number; bytes: Buffer };
  try {
    block = readEnvironmentBlock();
  } catch (error) {
    return `cannot read its environment block: ${(error as Error).message}`;
  }
  const hidden = credentialValues(block.bytes);
  if (hidden.length === 0) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync("/proc/self/mem", "r+");
    for (const { name, valueStart, valueEnd } of hidden) {
      const current = process.env[name];
      if (current !== undefined) process.env[name] = current; // now a heap copy: the C library no longer reads the block
      const fill = Buffer.alloc(valueEnd - valueStart, FILL);
      writeSync(fd, fill, 0, fill.length, block.start + valueStart);
    }
  } catch (error) {
    return `cannot overwrite its environment block: ${(error as Error).message}`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // What another process reads now: the same block, through the kernel.
  const left = credentialValues(readFileSync("/proc/self/environ")).length;
  return left === 0 ? undefined : `${left} credential${left === 1 ? "" : "s"} remained in its environment block`;
}

/** Where the kernel keeps this process's environment strings (`env_start`, `env_end` of /proc/self/stat). */
function readEnvironmentBlock(): { start: number; bytes: Buffer } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces and parentheses) start at field 3; env_start is field 50.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = Number(fields[47]);
  const end = Number(fields[48]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) throw new Error("no env_start/env_end in /proc/self/stat");
  const bytes = Buffer.alloc(end - start);
  const fd = openSync("/proc/self/mem", "r");
  try {
    readSync(fd, bytes, 0, bytes.length, start);
  } finally {
    closeSync(fd);
  }
  return { start, bytes };
}

/** The credentials in a block of `NAME=value\0` strings not hidden yet, with where their values are. */
function credentialValues(bytes: Buffer): Array<{ name: string; valueStart: number; valueEnd: number }> {
  const found: Array<{ name: string; valueStart: number; valueEnd: number }> = [];
  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(0, start);
    if (end === -1) end = bytes.length;
    const equals = bytes.indexOf(0x3d, start);
    if (equals !== -1 && equals < end && end > equals + 1) {
      const name = bytes.toString("utf8", start, equals);
      const value = bytes.toString("utf8", equals + 1, end);
      const hiddenAlready = bytes.subarray(equals + 1, end).every((byte) => byte === FILL);
      if (!hiddenAlready && (isSecretName(name) || redactSecrets(value) !== value)) found.push({ name, valueStart: equals + 1, valueEnd: end });
    }
    start = end + 1;
  }
  return found;
}
