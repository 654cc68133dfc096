import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT } from "../../src/util/steadyHeap.js";
import { ROOT } from "../helpers/paths.js";

const STEADY = pathToFileURL(path.join(ROOT, "dist/util/steadyHeap.js")).href;

/**
 * The factor V8 applies when it sets the old generation's next limit after a full collection, as its
 * `--trace-gc-verbose` prints it: Node 20 and 22 give it at the end of the limit line (`… new limit: 12205 KB (1.5)`,
 * after a `factor` line with V8's own choice), Node 24 on the `factor` line.
 */
async function appliedFactor(nodeFlags: string[]): Promise<number> {
  const script = `(await import(${JSON.stringify(STEADY)})).steadyHeap(); globalThis.gc();`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--trace-gc-verbose", ...nodeFlags, "--input-type=module", "-e", script], { timeout: 60_000 });
  const limit = /\[HeapController\] Limit: .*\((\d+(?:\.\d+)?)\)\s*$/m.exec(stdout);
  const factor = /\[HeapController\] factor (\d+(?:\.\d+)?) /.exec(stdout);
  const text = limit?.[1] ?? factor?.[1];
  if (text === undefined) throw new Error(`no growing factor in V8's trace:\n${stdout.slice(0, 2000)}`);
  return Number(text);
}

describe("steadyHeap (lllm serve, worker and mcp serve)", () => {
  it("sets V8's old-generation growing factor at run time, and leaves one given to node alone", async () => {
    expect(await appliedFactor([])).toBe(1 + HEAP_GROWING_PERCENT / 100);
    expect(await appliedFactor(["--heap-growing-percent=300"])).toBe(4);
  }, 120_000);
});
