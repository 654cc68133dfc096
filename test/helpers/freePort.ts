import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * A port on 127.0.0.1 with nothing listening on it (it was free a moment ago), for a URL where nothing may answer or
 * a server the test starts (and may restart) on it. Taken below the kernel's ephemeral range when there is room:
 * every `listen(0)` and outgoing connection of the tests running beside this one gets its port from that range, and
 * one of them taking this port meanwhile would answer where nothing should, or keep the server from starting again.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  for (let attempt = 0; below !== undefined && attempt < 20; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (below - 10_000));
    if (await listensOn(port)) return port;
  }
  return listensOn(0);
}

/** Listen on `port` (0: any) and close; resolves with the port, or 0 when it was taken. */
function listensOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => (port !== 0 && error.code === "EADDRINUSE" ? resolve(0) : reject(error)));
    probe.listen(port, "127.0.0.1", () => {
      const { port: bound } = probe.address() as { port: number };
      probe.close(() => resolve(bound));
    });
  });
}

/** The first port of the ephemeral range (Linux), when at least a thousand ports lie between 10000 and it. */
function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : undefined;
  } catch {
    return undefined;
  }
}
