import { distance } from "fastest-levenshtein";

/**
 * The candidates closest to `wanted`, best first: used for "did you mean …?" hints on unknown keys, refs and
 * tool names. A candidate counts when its edit distance is at most a third of the longer name (at least 2), or
 * when one name contains the other.
 */
export function closest(wanted: string, candidates: Iterable<string>, limit = 3): string[] {
  const lower = wanted.toLowerCase();
  const scored: Array<{ candidate: string; score: number }> = [];
  for (const candidate of new Set(candidates)) {
    const other = candidate.toLowerCase();
    const edits = distance(lower, other);
    const allowed = Math.max(2, Math.floor(Math.max(lower.length, other.length) / 3));
    const contains = lower.length >= 3 && (other.includes(lower) || lower.includes(other));
    if (edits <= allowed || contains) scored.push({ candidate, score: contains ? Math.min(edits, 1) : edits });
  }
  scored.sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate));
  return scored.slice(0, limit).map((entry) => entry.candidate);
}

/** "did you mean `a`?" or "did you mean one of `a`, `b`?", or "" when nothing is close. */
export function didYouMean(wanted: string, candidates: Iterable<string>): string {
  const found = closest(wanted, candidates);
  if (found.length === 0) return "";
  if (found.length === 1) return `did you mean \`${found[0]}\`?`;
  return `did you mean one of ${found.map((name) => `\`${name}\``).join(", ")}?`;
}
