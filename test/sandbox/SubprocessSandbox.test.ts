import { describe, expect, it, vi } from "vitest";
import { SubprocessSandbox, type Sandbox } from "../../src/sandbox/index.js";

describe("SubprocessSandbox (Step 17)", () => {
  it("runs each cell in a fresh process and returns stdout then stderr", async () => {
    const sandbox: Sandbox = new SubprocessSandbox();
    expect(await sandbox.run("print(sum(range(10)))")).toBe("45\n");
    expect(await sandbox.run("x = 1")).toBe("");
    expect(await sandbox.run("print(x)")).toContain("NameError: name 'x' is not defined");
    expect(await sandbox.run('import sys\nsys.stderr.write("err\\n")\nprint("out")')).toBe("out\nerr\n");
  });

  it("kills a cell past its timeout, with what it printed so far", async () => {
    // Only the kill can end this cell before the test's own timeout.
    const output = await new SubprocessSandbox({ timeout: 0.5 }).run('import time\nprint("started", flush=True)\ntime.sleep(600)');
    expect(output).toBe("started\nTimeoutError: cell exceeded the time limit of 0.5 s\n");
  });

  it("keeps the host's secrets out of the cell's environment", async () => {
    vi.stubEnv("SECRET_TEST_KEY", "sk-subprocess-secret");
    try {
      expect(await new SubprocessSandbox().run("import os\nprint(sorted(os.environ))")).not.toContain("SECRET_TEST_KEY");
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
