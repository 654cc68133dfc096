import { readdirSync, readFileSync } from "node:fs";

/** O_CLOEXEC as /proc/<pid>/fdinfo prints it (octal flags). */
const O_CLOEXEC = 0o2000000;
/** Past this, an inherited descriptor is not masked in the stdio list (the kernel still closes it at start). */
const MAX_MASKED_FD = 4096;

/**
 * The descriptors of this process that a child would inherit: open without close-on-exec, other than 0-2. Node
 * opens its own with close-on-exec, so these are what lllm's parent left open (a shell's `exec 200<file`), which
 * spawn would hand to every child. Empty where /proc cannot tell (not Linux).
 */
export function inheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // closed meanwhile (the directory listing's own descriptor)
    }
  }
  return found.sort((a, b) => a - b);
}

/**
 * A spawn `stdio` list that covers every inherited descriptor: `chosen` keeps its positions, and each inherited
 * descriptor past them is pointed at `devNull`, so the child gets /dev/null there instead of the parent's file.
 * libuv leaves any descriptor the list does not name untouched (open), which is how they crossed into the sandbox.
 */
export function maskedStdio<T>(chosen: readonly T[], devNull: number): Array<T | number | "ignore"> {
  const stdio: Array<T | number | "ignore"> = [...chosen];
  const inherited = inheritedDescriptors().filter((fd) => fd >= chosen.length && fd <= MAX_MASKED_FD);
  const last = inherited.at(-1);
  if (last === undefined) return stdio;
  const masked = new Set(inherited);
  for (let fd = chosen.length; fd <= last; fd += 1) stdio.push(masked.has(fd) ? devNull : "ignore");
  return stdio;
}
