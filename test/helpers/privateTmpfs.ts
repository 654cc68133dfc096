import { spawn, spawnSync } from "node:child_process";

export interface PrivateTmpfsOptions {
  /** An empty folder: the tmpfs is mounted on it, seen by the script's processes only. */
  mountPoint: string;
  /** The tmpfs size, as mount takes it (`64k`, `1m`). */
  size: string;
  /** A bash script run with the tmpfs mounted; it may grow it (`mount -o remount,size=1m "$MOUNT"`). */
  script: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Run a bash script with a small tmpfs mounted in a mount namespace of its own (unshare): an honest full disk,
 * where a write fails with ENOSPC, often after part of it went in. The mount is gone with the script's processes.
 * As root (CI) a plain mount namespace; otherwise one inside a user namespace. Throws (a test never skips) when
 * neither can be made, saying why.
 */
export function inPrivateTmpfs(options: PrivateTmpfsOptions): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const unshare = ["--mount", "--propagation", "private"];
  if (spawnSync("unshare", [...unshare, "true"]).status !== 0) {
    unshare.unshift("--user", "--map-root-user");
    const probe = spawnSync("unshare", [...unshare, "true"], { encoding: "utf8" });
    if (probe.status !== 0) throw new Error(`a private mount namespace is needed for a full-disk test (unshare --mount, or --user --map-root-user --mount): ${probe.error?.message ?? probe.stderr}`);
  }
  const script = `set -u\nmount -t tmpfs -o size="$SIZE" tmpfs "$MOUNT" || exit 99\n${options.script}`;
  return new Promise((resolve, reject) => {
    const child = spawn("unshare", [...unshare, "bash", "-c", script], { cwd: options.cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...options.env, MOUNT: options.mountPoint, SIZE: options.size }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
