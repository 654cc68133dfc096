import { afterAll, describe, expect, it } from "vitest";
import { closeAllKernels, detectIsolation, PythonKernel } from "../../src/sandbox/index.js";
import { detectGvisor } from "../../src/sandbox/detectGvisor.js";

const backends = [...((await detectIsolation()).backend === "bwrap" ? ["bwrap" as const] : []), ...((await detectGvisor()).available ? ["gvisor" as const] : [])];

afterAll(() => closeAllKernels());

describe.skipIf(backends.length === 0).each(backends)("limits under %s", (backend) => {
  it("a cell stopped by its time limit takes every process in the sandbox with it; the namespace survives", async () => {
    // Only the cell under test has the short limit: the others may take as long as a busy machine needs.
    const kernel = await PythonKernel.start({ isolation: { backend } });
    await kernel.run("kept = 42");
    const result = await kernel.execute('import subprocess, time\nsubprocess.Popen(["sleep", "100"])\ntime.sleep(30)', { timeout: 1 });
    expect(result.error?.type).toBe("TimeoutError");
    expect(await kernel.run('import os\nprint(kept, [p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid()) and open(f"/proc/{p}/cmdline", "rb").read().startswith(b"sleep")])')).toBe("42 []\n");
    await kernel.close();
  }, 120_000);

  it("workspaceMb makes /workspace a private folder of that size", async () => {
    const kernel = await PythonKernel.start({ isolation: { backend, workspaceMb: 2 } });
    const output = await kernel.run('import os\ntry:\n    open("big.bin", "wb").write(b"0" * 5 * 1024 * 1024)\nexcept OSError as error:\n    print(error.errno)\nprint(os.getcwd())');
    expect(output).toBe("28\n/workspace\n"); // ENOSPC
    await kernel.close();
  });
});

describe("limits given from code", () => {
  it("a limit that is not a number above 0 is refused before a kernel starts, not taken for no limit", async () => {
    // The kernel skips a limit that is missing or zero: NaN (a caller's Number("abc")) would lift it.
    await expect(PythonKernel.start({ isolation: { backend: "none", cpuSeconds: Number.NaN } })).rejects.toThrow("the sandbox's cpuSeconds is NaN: it must be a number above 0");
    await expect(PythonKernel.start({ isolation: { backend: "none", memoryMb: 0 } })).rejects.toMatchObject({ code: "sandbox_invalid" });
  });
});
