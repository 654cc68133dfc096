import { createServer } from "node:net";

/** A port on 127.0.0.1 with nothing listening on it (it was free a moment ago: the OS just gave it out and it was closed). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
