/**
 * A signal that aborts when any of `signals` does, and a `dispose` that unhooks it. `AbortSignal.any` does the same,
 * but on Node 20 every call leaves an entry in each source's set of dependants that is never removed: a batch that
 * links each item's run to its one long-lived cancel signal grows that set by one per item. Here the listeners are
 * removed when the run ends.
 */
export function linkedSignal(signals: readonly AbortSignal[]): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const listeners = signals.map((signal) => {
    const listener = (): void => controller.abort(signal.reason);
    signal.addEventListener("abort", listener, { once: true });
    return () => signal.removeEventListener("abort", listener);
  });
  return { signal: controller.signal, dispose: () => listeners.forEach((remove) => remove()) };
}
