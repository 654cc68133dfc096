const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `15m`, `2h`, `30d`, `1w` in milliseconds; `undefined` when the text is not such an age. */
export function parseAge(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/i.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
}
