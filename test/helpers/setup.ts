import { afterAll, vi } from "vitest";
import { removeTempDirs } from "./tempTree.js";

// Runs before every test file (vitest `setupFiles`). Hooks registered here run after the file's own: the file
// closes its kernels and servers first, then the folders they used are removed and the environment restored.
afterAll(() => {
  vi.unstubAllEnvs();
  removeTempDirs();
});
