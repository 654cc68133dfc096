import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/globalSetup.ts"],
    // Per test file: removes its temp folders and restores vi.stubEnv after the file.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // CLI tests spawn real processes; two cores on CI, so keep parallelism modest.
    maxWorkers: 2,
  },
});
