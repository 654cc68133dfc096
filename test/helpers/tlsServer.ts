import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import tls from "node:tls";
import { tempDir } from "./tempTree.js";

/** A certificate for 127.0.0.1 that signs itself, made now with `openssl`, and its files (for NODE_EXTRA_CA_CERTS). */
export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** The certificate's PEM file. */
  certFile: string;
}

/** Make a self-signed certificate for 127.0.0.1 (and localhost), valid for a day. Needs `openssl` on the PATH. */
export function selfSignedCertificate(): SelfSignedCertificate {
  const dir = tempDir("lllm-cert-");
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "pipe" });
  return { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8"), certFile };
}

/** A TLS front for a plain server on 127.0.0.1: what a client sends over TLS reaches `targetPort` decrypted. */
export interface TlsFront {
  port: number;
  /** TLS connections accepted (handshakes begun). */
  connections(): number;
  close(): Promise<void>;
}

export async function startTlsFront(certificate: SelfSignedCertificate, targetPort: number): Promise<TlsFront> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = tls.createServer({ key: certificate.key, cert: certificate.cert }, (secure) => {
    const upstream = net.connect({ host: "127.0.0.1", port: targetPort });
    track(upstream);
    upstream.on("error", () => secure.destroy());
    secure.on("error", () => upstream.destroy());
    secure.pipe(upstream).pipe(secure);
  });
  server.on("connection", (raw: net.Socket) => {
    connections += 1;
    track(raw);
  });
  // A client that refuses the certificate ends the handshake: not the front's problem.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
