import { spawn } from "node:child_process";
import { chmodSync, statSync } from "node:fs";
import path from "node:path";
import { BIN, ROOT } from "./paths.js";
import type { CliResult } from "./runCli.js";

/** Whether the tests run as root: only root can run a CLI as another user or give a file to one. */
export const AS_ROOT = process.getuid?.() === 0;

/** `nobody`: the other user of the tests ("owned by another user", "read by another user"). */
export const NOBODY = 65534;

/**
 * The built CLI as user `uid` (undefined: this user), with `env` alone (no clean defaults added: a run as another
 * user needs a HOME and LLLM_HOME it may use). No standard input.
 */
export function runCliAs(uid: number | undefined, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"], ...(uid !== undefined ? { uid, gid: uid } : {}) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Let other users reach `folder`: it and each folder above it that lacks them get o+rx (the test's TMPDIR is 0700).
 * Returns what puts the modes back.
 */
export function openToOthers(folder: string): () => void {
  const restore: Array<() => void> = [];
  for (let current = folder; current !== path.dirname(current); current = path.dirname(current)) {
    const before = statSync(current).mode & 0o7777;
    if ((before & 0o005) === 0o005) continue;
    chmodSync(current, before | 0o005);
    restore.push(() => chmodSync(current, before));
  }
  return () => {
    for (const undo of restore.reverse()) undo();
  };
}
