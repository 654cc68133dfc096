import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeAllKernels, detectIsolation, PythonKernel } from "../../src/sandbox/index.js";
import { findPython } from "../../src/sandbox/findPython.js";

// A machine without bubblewrap, made by hiding it from PATH before the (per-process, cached) probe: this file runs
// in its own module graph, so the probe here sees the reduced PATH.
describe("without bubblewrap", () => {
  let python = "";
  beforeAll(async () => {
    python = (await findPython()).executable;
    vi.stubEnv("PATH", "/nonexistent");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await closeAllKernels();
  });

  it("detectIsolation says bwrap is not installed", async () => {
    expect(await detectIsolation()).toEqual({ backend: "none", reason: "bwrap is not installed" });
  });

  it("backend bwrap fails with a SandboxError that says what to install", async () => {
    const failure = PythonKernel.start({ python, isolation: { backend: "bwrap" } });
    await expect(failure).rejects.toMatchObject({
      name: "SandboxError",
      code: "sandbox_unavailable",
      message: "the sandbox asked for bubblewrap isolation, which cannot run here: bwrap is not installed",
      hint: expect.stringContaining("apt-get install bubblewrap"),
    });
  });

  it("backend auto runs a plain process and warns once per process", async () => {
    const warnings: string[] = [];
    const first = await PythonKernel.start({ python, isolation: { backend: "auto" }, onWarning: (message) => warnings.push(message) });
    const second = await PythonKernel.start({ python, isolation: { backend: "auto" }, onWarning: (message) => warnings.push(message) });
    expect(first.backend).toBe("none");
    expect(second.backend).toBe("none");
    expect(await first.run("print(6 * 7)")).toBe("42\n");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("Python code runs without isolation (bwrap is not installed)");
  });
});
