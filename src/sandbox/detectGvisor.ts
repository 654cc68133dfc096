import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { onPath } from "./detectIsolation.js";
import { runscArguments, writeGvisorBundle } from "./gvisorBundle.js";
import { processTempDir } from "../util/processTempDir.js";

/** Whether gVisor can run a sandbox here. */
export interface GvisorSupport {
  available: boolean;
  /** The runsc program, when it works. */
  runsc?: string;
  /** runsc must run with --rootless (the host is not root). */
  rootless?: boolean;
  /** Why not, when it cannot. */
  reason?: string;
}

/** How to get gVisor, for error messages. */
export const GVISOR_HINT = "Install gVisor (`apt-get install runsc`, or see https://gvisor.dev/docs/user_guide/install/).";

let probe: Promise<GvisorSupport> | undefined;

/** Whether runsc is installed and starts a sandbox built like a kernel's (probed once per process, running `true`). */
export function detectGvisor(): Promise<GvisorSupport> {
  probe ??= runProbe();
  return probe;
}

async function runProbe(): Promise<GvisorSupport> {
  if (process.platform !== "linux") return { available: false, reason: `gVisor needs Linux (this is ${process.platform})` };
  const runsc = onPath("runsc");
  if (runsc === undefined) return { available: false, reason: "runsc is not installed" };
  const rootless = process.getuid?.() !== 0;
  const folder = processTempDir("lllm-gvisor-probe-");
  try {
    writeGvisorBundle(folder, { readOnly: [], tmpMb: 1, workspaceMb: 1, uid: 65534, command: ["true"] });
    const args = runscArguments(folder, path.join(folder, "state"), `lllm-probe-${process.pid}`, rootless);
    return await new Promise((resolve) => {
      execFile(runsc, args, { timeout: 20_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } }, (error, _stdout, stderr) => {
        if (error) resolve({ available: false, reason: `runsc cannot start a sandbox here: ${lastLine(stderr) || error.message}` });
        else resolve({ available: true, runsc, rootless });
      });
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
