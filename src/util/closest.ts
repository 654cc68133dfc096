import { distance } from "fastest-levenshtein";

/**
 * The candidates closest to `wanted`, best first: used for "did you mean …?" hints on unknown keys, refs and
 * tool names. A candidate counts when its edit distance is at most a third of the longer name (at least 2); when
 * none does, names that contain the other (or are contained in it) are offered instead.
 */
export function closest(wanted: string, candidates: Iterable<string>, limit = 3): string[] {
  const lower = wanted.toLowerCase();
  const near: Array<{ candidate: string; edits: number }> = [];
  const containing: Array<{ candidate: string; edits: number }> = [];
  for (const candidate of new Set(candidates)) {
    const other = candidate.toLowerCase();
    const edits = distance(lower, other);
    const allowed = Math.max(2, Math.floor(Math.max(lower.length, other.length) / 3));
    if (edits <= allowed) near.push({ candidate, edits });
    else if (lower.length >= 3 && (other.includes(lower) || lower.includes(other))) containing.push({ candidate, edits });
  }
  // A near miss (a typo) beats a name that merely contains the other; containment is the fallback.
  const scored = near.length > 0 ? near : containing;
  scored.sort((a, b) => a.edits - b.edits || a.candidate.localeCompare(b.candidate));
  return scored.slice(0, limit).map((entry) => entry.candidate);
}

/** "did you mean `a`?" or "did you mean one of `a`, `b`?", or "" when nothing is close. */
export function didYouMean(wanted: string, candidates: Iterable<string>): string {
  const found = closest(wanted, candidates);
  if (found.length === 0) return "";
  if (found.length === 1) return `did you mean \`${found[0]}\`?`;
  return `did you mean one of ${found.map((name) => `\`${name}\``).join(", ")}?`;
}
