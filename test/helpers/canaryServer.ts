import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback HTTP server that counts the requests it gets: code in a sandbox must never reach it. */
export interface CanaryServer {
  port: number;
  url: string;
  /** How many requests reached the server so far. */
  requests(): number;
  close(): Promise<void>;
}

/** Start a canary on 127.0.0.1 (any free port); every request is answered "reached the host". */
export async function startCanaryServer(): Promise<CanaryServer> {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests += 1;
    response.end("reached the host");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
