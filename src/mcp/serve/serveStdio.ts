import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Readable, Writable } from "node:stream";
import { StdioServerLines } from "./StdioServerLines.js";

/**
 * Serve `server` over newline-delimited JSON-RPC on `stdin`/`stdout` (the process's by default) until the
 * client goes away: the input ends or the connection closes. A bad or oversized message is answered with a
 * JSON-RPC error and logged with `log` (default: stderr); it never ends the service (see `StdioServerLines`).
 */
export async function serveStdio(server: Server, streams: { stdin?: Readable; stdout?: Writable; log?: (text: string) => void; signal?: AbortSignal } = {}): Promise<void> {
  const stdin = streams.stdin ?? process.stdin;
  const log = streams.log ?? ((text: string) => void process.stderr.write(`${text}\n`));
  const transport = new StdioServerLines({ stdin, stdout: streams.stdout ?? process.stdout, log });
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose;
    server.onclose = () => {
      previous?.();
      resolve();
    };
  });
  const ended = (): void => {
    void server.close();
  };
  stdin.once("end", ended);
  stdin.once("close", ended);
  // A signal (SIGTERM from the client that started us) ends serving at once.
  streams.signal?.addEventListener("abort", ended, { once: true });
  try {
    await server.connect(transport);
    await closed;
  } finally {
    stdin.off("end", ended);
    stdin.off("close", ended);
    streams.signal?.removeEventListener("abort", ended);
  }
}
