/** `1 turn`, `2 turns`, `0 turns`: a count and its noun, singular only for exactly one (`many` for irregular plurals). */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : many}`;
}
