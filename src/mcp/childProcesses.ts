/**
 * The MCP server processes this process started and has not seen end. Each server leads its own process group
 * (it is spawned `detached`), so what it starts is stopped with it. The graceful path is
 * `McpConnections.closeAll()`; this is the safety net for errors that skip it, `process.exit()`, and signals.
 */
export interface TrackedChild {
  /** The server's pid, which is also its process group's id. */
  readonly pid: number;
  /** Stop the group: SIGTERM, then SIGKILL after a short grace; resolves when the server is gone. */
  terminate(): Promise<void>;
}

const live = new Map<number, TrackedChild>();

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let installed = false;

/** Remember a server process; the first one installs the exit and signal hooks. */
export function trackChild(child: TrackedChild): void {
  live.set(child.pid, child);
  if (!installed) install();
}

/** Forget a server process whose group has been stopped (its pid may be reused by another process). */
export function untrackChild(pid: number): void {
  live.delete(pid);
  if (live.size === 0 && installed) uninstall();
}

/** Whether a pid is still tracked as a live server. */
export function isTrackedChild(pid: number): boolean {
  return live.has(pid);
}

/** Send `signal` to a process group; false when the group is gone already. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILL every tracked server's process group, synchronously: an `exit` handler cannot wait for a grace period,
 * and a server that ignores SIGTERM must not outlive lllm.
 */
export function killTrackedChildren(): void {
  for (const pid of live.keys()) signalGroup(pid, "SIGKILL");
  live.clear();
}

/** Stop every tracked server's group (SIGTERM, then SIGKILL); for the CLI's signal handler. */
export async function terminateTrackedChildren(): Promise<void> {
  await Promise.allSettled([...live.values()].map((child) => child.terminate()));
}

/**
 * A library user's program without a handler of its own for this signal would die at once, skipping `exit`
 * hooks, and the servers (in their own process groups, which a terminal's Ctrl-C does not reach) would stay:
 * kill them, then re-raise the signal for Node's default behaviour. When the program has a handler (the CLI's
 * `handleSignals`), it stops the run and the servers itself.
 */
function onSignal(signal: NodeJS.Signals): void {
  const others = process.listeners(signal).filter((listener) => listener !== onSignal);
  if (others.length > 0) return;
  killTrackedChildren();
  uninstall();
  process.kill(process.pid, signal);
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
