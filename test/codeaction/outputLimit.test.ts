import { afterAll, describe, expect, it } from "vitest";
import { closeAllKernels, PythonKernel, type PythonKernelOptions } from "../../src/sandbox/index.js";

// Output that ends in an exception follows the same limit as other output (seed 000, Step 13): at most
// max_output_chars characters and the truncation indicator, with the end of the traceback (what went wrong) kept.
afterAll(async () => {
  await closeAllKernels();
});

function start(options: Partial<PythonKernelOptions>): Promise<PythonKernel> {
  return PythonKernel.start({ isolation: { backend: "none" }, ...options });
}

describe("the output limit when a cell ends in an exception", () => {
  it("keeps the traceback's end, cuts the printed head, marks the cut, and stays within the limit", async () => {
    const kernel = await start({ maxOutputChars: 200 });
    const result = await kernel.execute('print("x" * 1000)\nraise ValueError("the last line says what went wrong")');
    expect(result.output.length).toBeLessThanOrEqual(200 + "... (truncated)".length);
    expect(result.output).toContain("... (truncated)");
    expect(result.output.startsWith("xxxx")).toBe(true);
    expect(result.output.trimEnd().endsWith("ValueError: the last line says what went wrong")).toBe(true);
    expect(result.error).toEqual({ type: "ValueError", message: "the last line says what went wrong" });
  });

  it("a traceback longer than the limit alone keeps its end, marked with the indicator", async () => {
    const kernel = await start({ maxOutputChars: 120, truncationIndicator: "[cut]" });
    const result = await kernel.execute("def f(n):\n    return f(n + 1) if n < 30 else 1 / 0\nf(0)");
    expect(result.output.length).toBeLessThanOrEqual(120 + "[cut]".length);
    expect(result.output.startsWith("[cut]\n")).toBe(true);
    expect(result.output.trimEnd().endsWith("ZeroDivisionError: division by zero")).toBe(true);
  });

  it("a short output with an exception is not cut", async () => {
    const kernel = await start({ maxOutputChars: 500 });
    const result = await kernel.execute('print("partial")\n1 / 0');
    expect(result.output).toMatch(/^partial\nTraceback \(most recent call last\):\n[\s\S]*ZeroDivisionError: division by zero\n$/);
    expect(result.output).not.toContain("truncated");
  });

  it("a timeout keeps the word TimeoutError however small the limit", async () => {
    const kernel = await start({ maxOutputChars: 30, timeout: 0.5 });
    const result = await kernel.execute('print("y" * 100)\nimport time\ntime.sleep(30)');
    expect(result.error?.type).toBe("TimeoutError");
    expect(result.output).toContain("TimeoutError: ");
    expect(result.output.length).toBeLessThanOrEqual(30 + "... (truncated)".length);
  });

  it("a cell that caught its TimeoutError and finished anyway still says TimeoutError", async () => {
    const kernel = await start({ maxOutputChars: 1000, timeout: 0.5 });
    const result = await kernel.execute('import time\ntry:\n    time.sleep(30)\nexcept BaseException:\n    print("caught")');
    expect(result.error?.type).toBe("TimeoutError");
    expect(result.output).toBe("caught\nTimeoutError: cell exceeded the time limit of 0.5 s\n");
  });
});
