import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { lllm, project, PROMPT_PACKAGE } from "./packageFixtures.js";

// Docker's credentials for an OCI registry go to that registry's origin only: not to an upload location or a blob
// store on another origin, and not to a token service that another origin's 401 names (past a redirect).

const secret = "DOCKER-PASSWORD-d41d8cd9";
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

type Handler = (request: IncomingMessage, response: ServerResponse, url: string) => void;

/** A server on 127.0.0.1 that records each request's path and Authorization header. */
async function serve(handler: Handler): Promise<{ origin: string; seen: Array<{ path: string; authorization?: string }> }> {
  const seen: Array<{ path: string; authorization?: string }> = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      seen.push({ path: request.url!, ...(request.headers.authorization !== undefined ? { authorization: request.headers.authorization } : {}) });
      handler(request, response, request.url!);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const sha256 = (data: Buffer): string => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/** A home whose Docker config holds credentials for `registry`. */
function dockerConfig(registry: string): string {
  const dir = tempDir("lllm-docker-");
  writeTree(dir, { "config.json": JSON.stringify({ auths: { [registry]: { auth: Buffer.from(`ada:${secret}`).toString("base64") } } }) });
  return dir;
}

describe("OCI registry credentials", () => {
  it("are not sent to a token service named by a 401 of the blob store the registry redirects to", async () => {
    const layer = packageTarball(PROMPT_PACKAGE);
    const config = Buffer.from("{}");
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        artifactType: "application/vnd.lllm.package.v1",
        config: { mediaType: "application/vnd.lllm.package.config.v1+json", digest: sha256(config), size: config.length },
        layers: [{ mediaType: "application/vnd.lllm.package.layer.v1.tar+gzip", digest: sha256(layer), size: layer.length }],
      }),
    );
    let storeOrigin = "";
    const store = await serve((request, response, url) => {
      if (url.startsWith("/token")) response.end(JSON.stringify({ token: "from-the-blob-store" }));
      else if (request.headers.authorization === undefined) {
        response.writeHead(401, { "www-authenticate": `Bearer realm="${storeOrigin}/token",service="store"` });
        response.end();
      } else response.end(layer);
    });
    storeOrigin = store.origin;
    const registry = await serve((_request, response, url) => {
      if (url.includes("/manifests/")) {
        response.writeHead(200, { "content-type": "application/vnd.oci.image.manifest.v1+json" });
        response.end(manifest);
      } else {
        response.writeHead(307, { location: `${storeOrigin}/blob${url}` });
        response.end();
      }
    });
    const host = registry.origin.replace("http://", "");
    const result = await lllm(["add", `oci://${host}/acme/greet:1.0.0`], { cwd: project(), home: tempDir("lllm-home-"), env: { DOCKER_CONFIG: dockerConfig(host) } });
    // The registry itself had the credentials; the blob store, its token service included, never did.
    expect(registry.seen.every((request) => request.authorization?.startsWith("Basic "))).toBe(true);
    expect(store.seen.length).toBeGreaterThan(0);
    expect(store.seen.filter((request) => request.authorization !== undefined)).toEqual([]);
    expect(store.seen.map((request) => request.path)).not.toContain("/token?service=store");
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toContain(secret);
  }, 60_000);

  it("are not sent to an upload location on another origin when publishing", async () => {
    const uploads = await serve((_request, response) => {
      response.writeHead(201);
      response.end();
    });
    const registry = await serve((request, response, url) => {
      if (request.method === "HEAD") response.writeHead(404);
      else if (url.endsWith("/blobs/uploads/")) response.writeHead(202, { location: `${uploads.origin}/upload` });
      else response.writeHead(201);
      response.end();
    });
    const host = registry.origin.replace("http://", "");
    const author = tempDir("lllm-author-");
    writeTree(author, PROMPT_PACKAGE);
    const result = await lllm(["publish", ".", "--to", `oci://${host}/acme/greet:1.0.0`], { cwd: author, home: tempDir("lllm-home-"), env: { DOCKER_CONFIG: dockerConfig(host) } });
    expect(result.code, result.stderr).toBe(0);
    expect(uploads.seen.map((request) => request.path.split("?")[0])).toEqual(["/upload", "/upload"]);
    expect(uploads.seen.filter((request) => request.authorization !== undefined)).toEqual([]);
    expect(registry.seen.every((request) => request.authorization?.startsWith("Basic "))).toBe(true);
  }, 60_000);
});
