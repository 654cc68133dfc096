/** Something holding processes that must not outlive the host. */
export interface LiveKernel {
  close(): Promise<void>;
  /** Kill at once, synchronously: the only thing possible in an `exit` handler. */
  closeNow(): void;
}

const live = new Set<LiveKernel>();
let hooked = false;

/** Remember a kernel until it is closed; the first one installs the `exit` hook that kills whatever is left. */
export function trackKernel(kernel: LiveKernel): void {
  live.add(kernel);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const remaining of live) remaining.closeNow();
    });
  }
}

export function untrackKernel(kernel: LiveKernel): void {
  live.delete(kernel);
}

/** Close every kernel this process started and still holds; for the CLI's SIGINT path and test teardown. */
export async function closeAllKernels(): Promise<void> {
  await Promise.allSettled([...live].map((kernel) => kernel.close()));
}
