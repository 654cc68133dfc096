import { afterAll, describe, expect, it } from "vitest";
import { closeAllKernels, PythonKernel, type PythonKernelOptions } from "../../src/sandbox/index.js";

// Output that ends in an exception follows the same limit as other output (seed 000, Step 13): at most
// max_output_chars characters and the truncation indicator, its head kept as for plain output, and the last lines of
// the traceback (what went wrong) after the indicator.
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

  it("a traceback longer than the limit keeps its head and its last whole lines, the indicator between them", async () => {
    // Two functions calling each other: frames that differ, so that Python does not fold them into one line.
    const code = "def a(n):\n    return b(n + 1) if n < 30 else 1 / 0\ndef b(n):\n    return a(n + 1)\na(0)";
    const full = (await (await start({ maxOutputChars: 0 })).execute(code)).output;
    const result = await (await start({ maxOutputChars: 400, truncationIndicator: "[cut]" })).execute(code);
    expect(full.length).toBeGreaterThan(1000);
    expect(result.output.length).toBeLessThanOrEqual(400 + "[cut]".length);
    const [head, tail] = result.output.split("[cut]\n") as [string, string];
    // The head: the output's start, as for plain output (here the traceback's first lines).
    expect(head.startsWith("Traceback (most recent call last):\n  File \"<cell-")).toBe(true);
    expect(full.startsWith(head)).toBe(true);
    // The tail: the traceback's last lines, whole, down to the error.
    expect(full.endsWith(tail)).toBe(true);
    expect(full.at(-tail.length - 1)).toBe("\n");
    expect(tail.split("\n").length).toBeGreaterThan(3);
    expect(tail).toContain("    return b(n + 1) if n < 30 else 1 / 0\n");
    expect(tail.endsWith("\nZeroDivisionError: division by zero\n")).toBe(true);
  });

  it("printed output before a long traceback leads the head", async () => {
    const code = 'print("the cell printed this first")\ndef a(n):\n    return b(n + 1) if n < 30 else 1 / 0\ndef b(n):\n    return a(n + 1)\na(0)';
    const result = await (await start({ maxOutputChars: 400 })).execute(code);
    expect(result.output.length).toBeLessThanOrEqual(400 + "... (truncated)".length);
    expect(result.output).toMatch(/^the cell printed this first\nTraceback \(most recent call last\):\n[\s\S]*\.\.\. \(truncated\)\n[\s\S]*\n {2}File "<cell-\d+>", line \d, in [ab]\n[\s\S]*\nZeroDivisionError: division by zero\n$/);
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
