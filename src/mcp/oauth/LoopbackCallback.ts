import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A free TCP port on 127.0.0.1 (the callback listens on it only while a sign-in waits). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
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
