const UNITS: Record<string, number> = { "": 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };

/**
 * `512`, `"512M"`, `"1G"`, `"64K"`, `"1.5g"` -> megabytes; undefined for what is not a size above 0. A bare number
 * is megabytes (as lllm's size settings say): bytes would make `memory_limit: 1024` a 1 KB limit.
 */
export function megabytesOf(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(value);
  if (!match) return undefined;
  const megabytes = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  return megabytes > 0 ? megabytes : undefined;
}
