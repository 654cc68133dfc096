import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, vi } from "vitest";
import { removeTempDirs } from "./tempTree.js";

// Runs before every test file (vitest `setupFiles`). Hooks registered here run after the file's own: the file
// closes its kernels and servers first, then the folders they used are removed and the environment restored.
afterAll(() => {
  vi.unstubAllEnvs();
  removeTempDirs();
  leftKernels();
});

/**
 * A kernel this worker started and the file did not close keeps its folder (named after this process) until the
 * worker exits; vitest ends its workers with SIGTERM, which runs no exit handler, so the folder would be left in the
 * suite's temp dir and blamed on no file. Said here, on the file that left it.
 */
function leftKernels(): void {
  const mine = readdirSync(tmpdir()).filter((name) => name.startsWith(`lllm-kernel-${process.pid}-`));
  if (mine.length === 0) return;
  for (const name of mine) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  throw new Error(`this file left ${mine.length} kernel(s) open (${mine.join(", ")}): close them in the file (kernel.close(), or closeAllKernels() in an afterAll)`);
}
