import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Readable, Writable } from "node:stream";

/**
 * Serve `server` over newline-delimited JSON-RPC on `stdin`/`stdout` (the process's by default) until the
 * client goes away: the input ends or the connection closes. The SDK's stdio transport does not notice the
 * end of its input by itself, so that is watched here.
 */
export async function serveStdio(server: Server, streams: { stdin?: Readable; stdout?: Writable } = {}): Promise<void> {
  const stdin = streams.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, streams.stdout ?? process.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  const ended = (): void => {
    void server.close();
  };
  stdin.once("end", ended);
  stdin.once("close", ended);
  try {
    await server.connect(transport);
    await closed;
  } finally {
    stdin.off("end", ended);
    stdin.off("close", ended);
  }
}
