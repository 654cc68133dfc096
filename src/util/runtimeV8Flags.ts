import { createRequire } from "node:module";
import type v8 from "node:v8";

/** node:v8, required when a flag is first set: most commands set none, and loading it costs every start. */
const v8Module = (): typeof v8 => createRequire(import.meta.url)("node:v8") as typeof v8;

/** The V8 flags this process set after it started, each with the setting that undoes it (V8's default). */
const setSinceStart: Array<{ flag: string; undo: string }> = [];

/**
 * Set a V8 flag at run time, remembered so that the code cache can tell what V8 ran under. V8 stamps the data it
 * makes with a hash of its non-default flags and rejects data stamped otherwise: data made after such a change is
 * refused by every later process that has not made it (each `lllm run` after an `lllm serve` compiled again).
 */
export function setV8FlagAtRunTime(flag: string, undo: string): void {
  v8Module().setFlagsFromString(flag);
  setSinceStart.push({ flag, undo });
}

/** The flags set by `setV8FlagAtRunTime`, in order. */
export function v8FlagsSetAtRunTime(): readonly string[] {
  return setSinceStart.map((entry) => entry.flag);
}

/** Run `fn` under the flags V8 started with (those set at run time undone), then set them again. */
export function underStartFlags<T>(fn: () => T): T {
  if (setSinceStart.length === 0) return fn();
  const flags = v8Module();
  for (const entry of [...setSinceStart].reverse()) flags.setFlagsFromString(entry.undo);
  try {
    return fn();
  } finally {
    for (const entry of setSinceStart) flags.setFlagsFromString(entry.flag);
  }
}
