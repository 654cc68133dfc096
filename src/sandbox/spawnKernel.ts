import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { maskedStdio } from "./inheritedDescriptors.js";
import type { KernelLaunch } from "./prepareLaunch.js";

/**
 * Start a kernel's process with only the descriptors it needs: the bridge (fds 3 and 4, or stdio under gVisor),
 * the launch's own files after them (bwrap's argument list and seccomp filter), and /dev/null in place of every
 * descriptor lllm's parent left open, so no host file crosses into the sandbox. detached: the process leads its own
 * process group, so killing the group also ends what it started.
 */
export function spawnKernel(launch: KernelLaunch): ChildProcess {
  const base = launch.channel === "stdio" ? ["pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe", "pipe", "pipe"];
  const opened: number[] = [];
  try {
    for (const file of launch.fdFiles ?? []) opened.push(openSync(file, "r"));
    const devNull = openSync("/dev/null", "r+");
    opened.push(devNull);
    const stdio = maskedStdio<string | number>([...base, ...opened.slice(0, -1)], devNull);
    return spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: stdio as Array<"pipe" | "ignore" | number>, detached: true });
  } finally {
    // The child has its copies; ours are close-on-exec and would only leak into later children's lists.
    for (const fd of opened) closeSync(fd);
  }
}
