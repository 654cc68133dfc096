/**
 * The process a `javascript` check of `lllm test` runs in (`node checkRunner.js <check file> [transpile cache]`,
 * the run as JSON on stdin), so that a check that throws, hangs or exits takes only its own process down. It loads
 * the file as lllm loads package code (TypeScript without a build step), calls its default export with the run,
 * and prints the outcome as the last line of stdout, after a marker (the check may print too).
 */
import { importModule } from "../registry/importModule.js";
import { useTranspileCache } from "../registry/transpileCache.js";
import { CHECK_VERDICT_MARKER } from "./checkVerdict.js";

const [file, cache] = process.argv.slice(2);
if (cache) useTranspileCache(cache);

function report(outcome: Record<string, unknown>): void {
  process.stdout.write(`\n${CHECK_VERDICT_MARKER}${JSON.stringify(outcome)}\n`);
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const run: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  let loaded: Record<string, unknown>;
  try {
    loaded = await importModule(file!);
  } catch (error) {
    report({ broken: `the check file does not load: ${(error as Error).message}` });
    return;
  }
  const check = typeof loaded.default === "function" ? loaded.default : Object.values(loaded).find((value) => typeof value === "function");
  if (typeof check !== "function") {
    report({ broken: "the check file exports no function: export default (result) => boolean | string | {pass, score, reason}" });
    return;
  }
  // A promise that never settles leaves node with nothing to wait on: it would exit at once (code 13) instead of
  // running into the assertion's timeout, which says what happened. This timer keeps it waiting until then.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const value: unknown = await (check as (result: unknown) => unknown)(run);
    report({ value: value === undefined ? null : value });
  } catch (error) {
    report({ broken: `the check threw: ${error instanceof Error ? error.message : String(error)}` });
  } finally {
    clearInterval(keepAlive);
  }
}

await main();
