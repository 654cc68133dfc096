import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import net, { type AddressInfo } from "node:net";

/** What the proxy was asked: a CONNECT tunnel, or an absolute-form request (the http:// case). */
export interface ProxiedRequest {
  method: string;
  /** `host:port` for CONNECT, the absolute URL otherwise. */
  target: string;
  headers: IncomingHttpHeaders;
}

/** A running proxy on 127.0.0.1. */
export interface HttpProxy {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Every request it got, in order. */
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * A small forward proxy, as corporate networks run: CONNECT opens a TCP tunnel to the target, an absolute-form
 * request is forwarded (without the hop-by-hop `Proxy-Authorization`). With `credentials` ("user:password") it
 * answers 407 to anything without them.
 */
export async function startHttpProxy(options: { credentials?: string } = {}): Promise<HttpProxy> {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<net.Socket>();
  const expected = options.credentials === undefined ? undefined : `Basic ${Buffer.from(options.credentials).toString("base64")}`;
  const authorized = (headers: IncomingHttpHeaders): boolean => expected === undefined || headers["proxy-authorization"] === expected;

  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? "", target: request.url ?? "", headers: request.headers });
    if (!authorized(request.headers)) {
      response.writeHead(407, { "proxy-authenticate": 'Basic realm="proxy"' });
      return void response.end("Proxy Authentication Required");
    }
    const target = new URL(request.url ?? "");
    const { "proxy-authorization": _credentials, "proxy-connection": _connection, ...headers } = request.headers;
    const forwarded = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: request.method, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forwarded.on("error", () => {
      response.writeHead(502);
      response.end("Bad Gateway");
    });
    request.pipe(forwarded);
  });
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (request, client: net.Socket, head: Buffer) => {
    requests.push({ method: "CONNECT", target: request.url ?? "", headers: request.headers });
    if (!authorized(request.headers)) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n');
    const [host, port] = [(request.url ?? "").replace(/:\d+$/, ""), Number(/:(\d+)$/.exec(request.url ?? "")?.[1] ?? 443)];
    const upstream = net.connect({ host: host.replace(/^\[|\]$/g, ""), port }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
