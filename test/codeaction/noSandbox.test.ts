import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import path from "node:path";
import { approveNone, ArtifactStore, requireIsolation, runProgram } from "../../src/codeaction/index.js";
import { findPython } from "../../src/sandbox/findPython.js";
import { closeAllKernels } from "../../src/sandbox/index.js";
import { tool } from "../../src/tools/index.js";
import { tempDir } from "../helpers/tempTree.js";

// A machine with neither bubblewrap nor gVisor, made by hiding them from PATH before the (per-process, cached)
// probes: this file runs in its own module graph, so the probes here see the reduced PATH.
describe("code-action without a sandbox", () => {
  let python = "";
  beforeAll(async () => {
    python = (await findPython()).executable;
    vi.stubEnv("PATH", "/nonexistent");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await closeAllKernels();
  });

  it("fails with a SandboxError that says what to install, and how to opt out on purpose; no silent fallback", async () => {
    await expect(requireIsolation({ backend: "auto" }, "code-action")).rejects.toMatchObject({
      name: "SandboxError",
      code: "sandbox_unavailable",
      message: "code-action runs model-written code only in a sandbox, and none works here: bwrap is not installed; runsc is not installed",
      hint: expect.stringContaining("set `sandbox: {backend: none}` in the tactic"),
    });
  });

  it("runs programs in a plain process when the tactic says backend: none", async () => {
    const isolation = await requireIsolation({ backend: "none" }, "code-action");
    expect(isolation.backend).toBe("none");
    const echo = tool({ name: "echo", description: "Echo", parameters: { text: { type: "string" } }, run: ({ text }) => text });
    const artifacts = new ArtifactStore(path.join(tempDir("lllm-artifacts-"), "artifacts"));
    const outcome = await runProgram('print(echo(text="plain"))', { tools: [echo], maxToolCalls: 5, execTimeout: 10, isolation, maxOutputChars: 1000, approval: approveNone, artifacts, context: {}, python });
    expect(outcome.answer).toBe("plain");
  });
});
