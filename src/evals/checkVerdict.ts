import { fileURLToPath } from "node:url";

/** Put before the last line a `javascript` check's process prints: the outcome, as JSON. */
export const CHECK_VERDICT_MARKER = "\u0000lllm-check-verdict:";

/** What a check's process printed after the marker, or undefined when it printed none. */
export function readVerdict(stdout: string): { value?: unknown; broken?: string } | undefined {
  const at = stdout.lastIndexOf(CHECK_VERDICT_MARKER);
  if (at < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(at + CHECK_VERDICT_MARKER.length).trim()) as { value?: unknown; broken?: string };
  } catch {
    return undefined;
  }
}

/** The file of the check runner in the built package (both the bundle and the per-file build reach it so). */
export function checkRunnerFile(): string {
  return fileURLToPath(new URL("../../dist/evals/checkRunner.js", import.meta.url));
}
