/**
 * Run `work` now and every `ms`, one run at a time: a tick that finds the last run still going is skipped (a slow
 * heartbeat while Redis is away is not overtaken by the next, which would do its work a second time beside it). The
 * timer is returned, for `clearInterval`; a run's failure is the next run's to meet.
 */
export function repeatInTurn(work: () => Promise<unknown>, ms: number, options: { now?: boolean } = {}): NodeJS.Timeout {
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    void work()
      .catch(() => undefined)
      .finally(() => (running = false));
  };
  if (options.now) tick();
  return setInterval(tick, ms);
}
