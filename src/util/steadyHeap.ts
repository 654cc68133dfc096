import { setV8FlagAtRunTime } from "./runtimeV8Flags.js";

/** How far V8 lets the old generation grow past what a full collection kept: 1.5x (its own factor goes up to 4x). */
export const HEAP_GROWING_PERCENT = 50;

/**
 * For a process that serves requests until stopped (`lllm serve`, `lllm worker`, `lllm mcp serve`): keep its heap
 * near its live data. Each request's objects live for the request's tens of milliseconds, long enough to survive
 * two young-generation collections, so they move to the old generation; V8 then lets that grow to up to four times
 * what its last full collection kept before it collects again. A server's memory climbed for its first ten thousand
 * requests that way (+47 MiB of RSS from 1,000 to 10,000, with 25 MB live), and measured from outside it looks like
 * a leak. At 1.5x, full collections come more often, each a few milliseconds on a heap this size: no change in
 * requests per second was measurable (bench/serve.js), and RSS stays within 10 MiB.
 *
 * Set at run time, before the first request: V8 reads the factor at each full collection. A `--heap-growing-percent`
 * given to node itself is left as it is. Set through `setV8FlagAtRunTime`, so that the code cache this process writes
 * at exit is made under the flags the next process starts with.
 */
export function steadyHeap(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  setV8FlagAtRunTime(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, "--heap-growing-percent=0");
}
