const UNITS: Record<string, number> = { "": 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };
/** Past this (1 PiB) a size is no limit any system has, and as bytes it would overflow a limit's integer. */
const MAX_MEGABYTES = 1024 ** 3;

/**
 * `512`, `"512M"`, `"1G"`, `"64K"`, `"1.5g"` -> megabytes; undefined for what is not a size above 0. A bare number
 * is megabytes (as lllm's size settings say): bytes would make `memory_limit: 1024` a 1 KB limit.
 */
export function megabytesOf(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 && value <= MAX_MEGABYTES ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])i?b?|(b))?\s*$/i.exec(value);
  if (!match) return undefined;
  // A `B` alone is bytes (`"536870912B"` is 512 MB, not 512 TB); no unit is megabytes.
  const megabytes = match[3] !== undefined ? Number(match[1]) / (1024 * 1024) : Number(match[1]) * UNITS[(match[2] ?? "").toLowerCase()]!;
  return megabytes > 0 && megabytes <= MAX_MEGABYTES ? megabytes : undefined;
}
