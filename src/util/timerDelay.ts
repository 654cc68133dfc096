/** The longest a Node timer waits (2^31 - 1 ms, about 24.8 days): a longer delay fires at once, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer can wait it: at most `MAX_TIMER_MS` (a longer wait ends there; re-arm to wait past it). */
export function timerDelay(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, ms));
}
