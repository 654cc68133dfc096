import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Where `freeLoopbackPort` looks: below the ports systems give outgoing connections (Linux from 32768, macOS and
 * Windows from 49152) and Kubernetes' node ports (30000-32767).
 */
export const CALLBACK_PORTS = { first: 20000, last: 29999 } as const;

/**
 * A free TCP port on 127.0.0.1 for a sign-in's callback (listened on only while a sign-in waits, later than it is
 * chosen: a stored registration names the same port at every sign-in). Not one `listen(0)` gives: those come from
 * the range of outgoing connections, any of which may hold it by then (the sign-in failed with EADDRINUSE, as
 * the MCP conformance suite found among the test suite's connections). Free now; after 50 tries, any free port.
 */
export async function freeLoopbackPort(ports: { first: number; last: number } = CALLBACK_PORTS): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = ports.first + Math.floor(Math.random() * (ports.last - ports.first + 1));
    if ((await listenOnce(port)) !== undefined) return port;
  }
  const any = await listenOnce(0);
  if (any === undefined) throw new Error("no port of 127.0.0.1 can be listened on for the sign-in's callback");
  return any;
}

/** Listen on `port` of 127.0.0.1 and close again: the port listened on, undefined when it could not be. */
async function listenOnce(port: number): Promise<number | undefined> {
  const server = createServer();
  const listened = await new Promise<boolean>((resolve) => server.once("error", () => resolve(false)).listen(port, "127.0.0.1", () => resolve(true)));
  if (!listened) return undefined;
  const address = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return address;
}

/**
 * The redirect target of a browser sign-in: an HTTP server on 127.0.0.1 (never another interface) that waits for
 * `GET /callback?code=…&state=…`, checks `state` against the one lllm sent (a page another site opened cannot
 * hand lllm a code of its own), answers the browser with a short page, and resolves with the code.
 */
export async function waitForCallback(options: { port: number; state: string; timeoutMs: number; signal?: AbortSignal | undefined; onListening: () => void | Promise<void> }): Promise<string> {
  let server: Server | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<string>((resolve, reject) => {
      server = createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1");
        if (url.pathname !== "/callback") {
          response.writeHead(404).end();
          return;
        }
        const error = url.searchParams.get("error");
        const code = url.searchParams.get("code");
        if (url.searchParams.get("state") !== options.state) {
          response.writeHead(400, { "content-type": "text/plain" }).end("This sign-in link is not the one lllm is waiting for.\n");
          return;
        }
        // Settled once the page is sent: closing the server right after must not cut the browser's answer.
        response.writeHead(error || !code ? 400 : 200, { "content-type": "text/plain" }).end(error || !code ? "Sign-in failed; see the terminal.\n" : "Signed in; you can close this page and return to the terminal.\n", () => {
          if (error) reject(new Error(`the authorization server answered ${error}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`));
          else if (!code) reject(new Error("the authorization server redirected back without a code"));
          else resolve(code);
        });
      });
      server.once("error", reject);
      timer = setTimeout(() => reject(new Error(`no sign-in within ${Math.round(options.timeoutMs / 1000)} s`)), options.timeoutMs);
      options.signal?.addEventListener("abort", () => reject(options.signal!.reason instanceof Error ? options.signal!.reason : new Error("interrupted")), { once: true });
      server.listen(options.port, "127.0.0.1", () => {
        Promise.resolve(options.onListening()).catch(reject);
      });
    });
  } finally {
    clearTimeout(timer);
    const listening = server;
    if (listening) {
      listening.closeAllConnections();
      await new Promise((resolve) => listening.close(resolve));
    }
  }
}
