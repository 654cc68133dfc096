/**
 * The resources of one tactic run (Python kernels, MCP server connections…), closed together when the run ends,
 * whether it succeeded, failed or was interrupted, so that no child process outlives its run.
 */
export class RunScope {
  readonly #closers: Array<() => Promise<void> | void> = [];
  #closed = false;

  /** Register a closer; closers run in reverse order of registration. */
  defer(close: () => Promise<void> | void): void {
    if (this.#closed) {
      void Promise.resolve().then(close);
      return;
    }
    this.#closers.push(close);
  }

  /** Run every closer once; a failing closer does not stop the others. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const close of this.#closers.reverse()) {
      try {
        await close();
      } catch {
        // Closing is best effort: the run's own error (if any) is the one worth reporting.
      }
    }
    this.#closers.length = 0;
  }
}
