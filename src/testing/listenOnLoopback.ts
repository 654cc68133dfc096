import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A mock server listening on a free port of 127.0.0.1. */
export interface LoopbackListener {
  port: number;
  /** Stop listening and drop open connections; closing twice (a test that closes early, then afterEach) is fine. */
  close(): Promise<void>;
}

/** Listen on a free loopback port (never another interface: tests reach only this machine). */
export async function listenOnLoopback(server: Server): Promise<LoopbackListener> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
