import { defineConfig } from "vitest/config";

/**
 * Test files that need a module graph of their own: they change what a per-process probe or cache sees (PATH without
 * bwrap, LLLM_HOME) before lllm's modules first read it, or they mock a module of lllm's. Every other file shares its
 * worker's modules with the files before it (no new process and no fresh imports per file: a tenth of the suite's CPU).
 */
const ISOLATED = [
  "test/sandbox/unavailable.test.ts",
  "test/codeaction/noSandbox.test.ts",
  "test/registry/transpileCache.test.ts",
  "test/serve/serveGuards.test.ts",
  "test/proxies/cli.test.ts",
  "test/cli/mcpClientHooks.test.ts",
  "test/tools/FunctionTool.test.ts",
  "test/mcp/packageServer.test.ts",
  "test/mcp/mcpToolsCommand.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/globalSetup.ts"],
    // Per test file: removes its temp folders and restores vi.stubEnv after the file.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what a server, a browser or another process does: 1 s (vitest's default) is short on a
    // busy machine. A call that bounds how soon something must happen passes its own timeout.
    expect: { poll: { timeout: 30_000 } },
    // CLI tests spawn real processes; two cores on CI. A third worker fills the time the other two wait on a server,
    // a timer or a child: the suite took 0.92 of the time with 2 (CPU was 77% busy with 2, 98% with 3).
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: "isolated", include: ISOLATED } },
      { extends: true, test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ISOLATED, isolate: false } },
    ],
  },
});
