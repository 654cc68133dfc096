/** How to show a difference: at most this many lines, each cut to `width` characters. */
export interface TextDiffOptions {
  maxLines?: number;
  width?: number;
  /** Labels of the two sides of a one-line difference; default `expected` and `got`. */
  labels?: [string, string];
}

/**
 * A short, readable difference between two texts, as lines to print (without indentation): for one-line texts the
 * two values, cut around the first character that differs; for longer ones the changed lines (`- ` before, `+ `
 * after) with one line of context, at most `maxLines` lines.
 */
export function textDiff(before: string, after: string, options: TextDiffOptions = {}): string[] {
  const maxLines = options.maxLines ?? 14;
  const width = options.width ?? 160;
  const [beforeLabel, afterLabel] = options.labels ?? ["expected", "got"];
  const beforeLines = before.split("\n");
  const afterLines = after.split("\n");
  if (beforeLines.length === 1 && afterLines.length === 1) {
    const at = firstDifference(before, after);
    const pad = Math.max(beforeLabel.length, afterLabel.length);
    return [`- ${`${beforeLabel}:`.padEnd(pad + 1)} ${excerpt(before, at, width)}`, `+ ${`${afterLabel}:`.padEnd(pad + 1)} ${excerpt(after, at, width)}`];
  }
  const lines = lineDiff(beforeLines, afterLines);
  const shown: string[] = [];
  let skipped = false;
  const changed = (index: number): boolean => lines[index] !== undefined && lines[index]!.kind !== " ";
  lines.forEach((line, index) => {
    // A changed line, or a kept one next to a change (its context).
    if (!changed(index) && !changed(index - 1) && !changed(index + 1)) {
      skipped = true;
      return;
    }
    if (skipped && shown.length > 0) shown.push("  …");
    skipped = false;
    shown.push(`${line.kind} ${cut(line.text, width)}`);
  });
  if (shown.length > maxLines) return [...shown.slice(0, maxLines - 1), `  … (${shown.length - maxLines + 1} more lines)`];
  return shown;
}

interface DiffLine {
  kind: " " | "-" | "+";
  text: string;
}

/** Lines kept, removed and added (a longest common subsequence; past 2,000 lines a side, only the ends are matched). */
function lineDiff(before: string[], after: string[]): DiffLine[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start += 1;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end += 1;
  const a = before.slice(start, before.length - end);
  const b = after.slice(start, after.length - end);
  const middle: DiffLine[] = [];
  if (a.length * b.length > 4_000_000) {
    middle.push(...a.map((text) => ({ kind: "-" as const, text })), ...b.map((text) => ({ kind: "+" as const, text })));
  } else {
    // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
    const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i -= 1) for (let j = b.length - 1; j >= 0; j -= 1) lengths[i]![j] = a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        middle.push({ kind: " ", text: a[i]! });
        i += 1;
        j += 1;
      } else if (i < a.length && (j >= b.length || lengths[i + 1]![j]! >= lengths[i]![j + 1]!)) {
        middle.push({ kind: "-", text: a[i]! });
        i += 1;
      } else {
        middle.push({ kind: "+", text: b[j]! });
        j += 1;
      }
    }
  }
  const same = (text: string): DiffLine => ({ kind: " ", text });
  return [...before.slice(0, start).map(same), ...middle, ...before.slice(before.length - end).map(same)];
}

function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index += 1;
  return index;
}

/** The text quoted, cut to about `width` characters around `at` (where the two sides start to differ). */
function excerpt(text: string, at: number, width: number): string {
  const start = text.length <= width || at < width / 2 ? 0 : at - Math.floor(width / 2);
  const piece = text.slice(start, start + width);
  return `${start > 0 ? "…" : ""}${JSON.stringify(piece)}${start + width < text.length ? "…" : ""}`;
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}
