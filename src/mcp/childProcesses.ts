/**
 * The pids of the MCP server processes this process started and has not seen exit. They are killed when this
 * process exits or is told to stop by a signal, so that no server outlives lllm: the graceful path is
 * `McpConnections.closeAll()`; this is the safety net for errors that skip it, `process.exit()`, and Ctrl-C.
 */
const live = new Set<number>();

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let installed = false;

/** Remember a server process; the first one installs the exit and signal hooks. */
export function trackChild(pid: number): void {
  live.add(pid);
  if (!installed) install();
}

/** Forget a server process that has exited (its pid may be reused by another process). */
export function untrackChild(pid: number): void {
  live.delete(pid);
  if (live.size === 0 && installed) uninstall();
}

/** Whether a pid is still tracked as a live server. */
export function isTrackedChild(pid: number): boolean {
  return live.has(pid);
}

/**
 * SIGTERM every tracked server, synchronously (an `exit` handler cannot wait). SIGTERM rather than SIGKILL:
 * a server may need to flush what it writes, and nearly every server exits on it (their stdin closes too).
 */
export function killTrackedChildren(): void {
  for (const pid of live) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killTrackedChildren();
  // With our listener as the only one, Node would no longer terminate on this signal: restore the default
  // behaviour by re-raising it. When the program has its own handler (the CLI aborting a run), it decides.
  const others = process.listeners(signal).filter((listener) => listener !== onSignal);
  uninstall();
  if (others.length === 0) process.kill(process.pid, signal);
}

function install(): void {
  installed = true;
  process.on("exit", killTrackedChildren);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  installed = false;
  process.off("exit", killTrackedChildren);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
