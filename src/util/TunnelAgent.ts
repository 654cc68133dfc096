import https from "node:https";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { proxyAuthorization, proxyOrigin } from "./proxyEnvironment.js";
import { ProxyFailed } from "./ProxyFailed.js";

// Where ProxyFailed was first defined. This module (https and tls with it) loads when a request first goes
// through a proxy's tunnel (nodeHttpFetch): what only needs the error imports ProxyFailed.js.
export { ProxyFailed } from "./ProxyFailed.js";

/** The longest proxy answer to a CONNECT read before giving up on it. */
const MAX_CONNECT_ANSWER = 64 * 1024;
/** How long a proxy may take to open a tunnel. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * A keep-alive pool of TLS connections to https:// servers through an HTTP proxy's CONNECT tunnel. The proxy sees
 * the target's host and port, and its own credentials (`Proxy-Authorization`, on the CONNECT only); the request,
 * its key included, travels inside TLS that is checked against the target's name, as without a proxy.
 */
export class TunnelAgent extends https.Agent {
  constructor(
    private readonly proxy: URL,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: (error: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = String(options.host ?? options.hostname ?? "localhost").replace(/^\[|\]$/g, "");
    const port = Number(options.port ?? 443);
    const target = `${net.isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    const origin = proxyOrigin(this.proxy);
    const socket = net.connect({ host: this.proxy.hostname.replace(/^\[|\]$/g, ""), port: Number(this.proxy.port || 80) });
    let answer = Buffer.alloc(0);
    let done = false;
    const finish = (error: Error | null, stream?: Duplex): void => {
      if (done) return;
      done = true;
      socket.setTimeout(0);
      socket.ref();
      socket.removeListener("data", onData);
      socket.removeListener("error", onError);
      socket.removeListener("end", onEnd);
      socket.removeListener("timeout", onTimeout);
      if (error) {
        socket.destroy();
        callback?.(error, undefined as unknown as Duplex);
      } else callback?.(null, stream!);
    };
    const onError = (error: Error): void => finish(new ProxyFailed(origin, undefined, `cannot be reached: ${error.message}`, { cause: error }));
    const onEnd = (): void => finish(new ProxyFailed(origin, undefined, `closed the connection instead of opening a tunnel to ${target}`));
    const onTimeout = (): void => finish(new ProxyFailed(origin, undefined, `did not open a tunnel to ${target} within ${CONNECT_TIMEOUT_MS / 1000} s`));
    const onData = (chunk: Buffer): void => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf("\r\n\r\n");
      if (end < 0) {
        if (answer.length > MAX_CONNECT_ANSWER) finish(new ProxyFailed(origin, undefined, `sent an answer to CONNECT ${target} that is not HTTP`));
        return;
      }
      const statusLine = answer.subarray(0, answer.indexOf("\r\n")).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      if (status !== "200") {
        const reason = status === undefined ? "answered CONNECT with something that is not HTTP" : `refused the tunnel to ${target}: ${statusLine.slice(9, 120)}`;
        return finish(new ProxyFailed(origin, status === undefined ? undefined : Number(status), reason));
      }
      if (answer.length > end + 4) return finish(new ProxyFailed(origin, 200, `sent data before the tunnel to ${target} was open`));
      socket.pause();
      const secure = tls.connect({ ...(options as tls.ConnectionOptions), socket, servername: options.servername ?? (net.isIP(host) === 0 ? host : undefined), host, port });
      finish(null, secure);
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("end", onEnd);
    socket.on("timeout", onTimeout);
    socket.setTimeout(CONNECT_TIMEOUT_MS);
    // A request given up (its timeout, Ctrl-C) while the tunnel opens must not keep the process alive.
    socket.unref();
    socket.once("connect", () => {
      const authorization = proxyAuthorization(this.proxy);
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${authorization ? `Proxy-Authorization: ${authorization}\r\n` : ""}\r\n`);
    });
    return undefined;
  }
}
