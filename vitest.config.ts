import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/globalSetup.ts"],
    // Per test file: removes its temp folders and restores vi.stubEnv after the file.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what a server, a browser or another process does: 1 s (vitest's default) is short on a
    // busy machine. A call that bounds how soon something must happen passes its own timeout.
    expect: { poll: { timeout: 30_000 } },
    // CLI tests spawn real processes; two cores on CI, so keep parallelism modest.
    maxWorkers: 2,
  },
});
