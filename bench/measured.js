// Every bench that times a process runs it under bench/measure.py (see there why): this is the command line for it,
// and the reading of what it printed.
import path from "node:path";
import { fileURLToPath } from "node:url";

const MEASURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "measure.py");

/** `spawn(...measured(command, args))`: the command under measure.py. */
export function measured(command, args) {
  return ["python3", [MEASURE, command, ...args]];
}

/**
 * What measure.py printed last on the command's stderr: wall time and CPU time (user + system, every thread) in ms,
 * peak RSS in KiB, from wait4's rusage of that process alone; NaN for a figure missing (the command was not run).
 */
export function usageOf(stderr) {
  const last = [...stderr.matchAll(/maxrss_kib=(\d+) cpu_us=(\d+) wall_us=(\d+)/g)].at(-1);
  if (!last) return { wallMs: NaN, cpuMs: NaN, maxrssKib: NaN };
  return { wallMs: Number(last[3]) / 1000, cpuMs: Number(last[2]) / 1000, maxrssKib: Number(last[1]) };
}
