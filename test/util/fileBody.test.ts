import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileBody } from "../../src/util/FileBody.js";
import { fetchWithinOrigin } from "../../src/util/fetchWithinOrigin.js";
import { nodeHttpFetch } from "../../src/util/nodeHttpFetch.js";
import { tempDir } from "../helpers/tempTree.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve)))));
});

interface Seen {
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A server on 127.0.0.1 that keeps what it was sent; `/moved` redirects (307) to `/upload`. */
async function serve(): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({ ...(request.url !== undefined ? { url: request.url } : {}), headers: request.headers, body: Buffer.concat(chunks) });
      if (request.url === "/moved") response.writeHead(307, { location: "/upload" }).end();
      else response.end("ok");
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A file of `lines` JSON lines of about 700 bytes (several chunks of the body's 64 KB buffer). */
function requestsFile(lines: number): { file: string; size: number; text: string } {
  const text = Array.from({ length: lines }, (_, index) => `${JSON.stringify({ custom_id: `r${index}`, body: "x".repeat(680) })}\n`).join("");
  const file = path.join(tempDir("lllm-filebody-"), "requests.jsonl");
  writeFileSync(file, text);
  return { file, size: Buffer.byteLength(text), text };
}

describe("FileBody: a batch job's upload sent from its file", () => {
  it("a multipart form of a field and a file arrives whole, with its length announced, and parses as a form", async () => {
    const server = await serve();
    const requests = requestsFile(500);
    const body = FileBody.multipart({ purpose: "batch" }, { field: "file", name: "requests.jsonl", type: "application/jsonl", ...requests });
    const response = await nodeHttpFetch(`${server.url}/upload`, { method: "POST", body: body as unknown as RequestInit["body"], redirect: "manual" });
    expect(await response.text()).toBe("ok");
    const [seen] = server.seen;
    expect(seen!.headers["content-length"]).toBe(String(body.size));
    expect(seen!.body.length).toBe(body.size);
    const form = await new Response(seen!.body, { headers: { "content-type": String(seen!.headers["content-type"]) } }).formData();
    expect(form.get("purpose")).toBe("batch");
    const file = form.get("file") as File;
    expect(file.name).toBe("requests.jsonl");
    expect(file.type).toBe("application/jsonl");
    expect(await file.text()).toBe(requests.text);
  });

  it("is sent again after a redirect within the origin, whole", async () => {
    const server = await serve();
    const requests = requestsFile(200);
    const body = new FileBody([requests], "application/json");
    const response = await fetchWithinOrigin((url, init) => nodeHttpFetch(url, init), `${server.url}/moved`, { method: "POST", body: body as unknown as RequestInit["body"] });
    expect(response.status).toBe(200);
    expect(server.seen.map((seen) => seen.url)).toEqual(["/moved", "/upload"]);
    expect(server.seen[1]!.body.toString()).toBe(requests.text);
    expect(server.seen[1]!.headers["content-type"]).toBe("application/json");
  });

  it("a file shorter than announced fails the request instead of sending a body cut short", async () => {
    const server = await serve();
    const requests = requestsFile(10);
    const body = new FileBody([{ file: requests.file, size: requests.size + 1000 }], "application/json");
    await expect(nodeHttpFetch(`${server.url}/upload`, { method: "POST", body: body as unknown as RequestInit["body"], redirect: "manual" })).rejects.toThrow();
    expect(server.seen).toHaveLength(0);
  });

  it("through Node's fetch (a request nodeHttpFetch does not make itself), it is sent as a Blob", async () => {
    const server = await serve();
    const requests = requestsFile(20);
    const response = await nodeHttpFetch(`${server.url}/upload`, { method: "POST", body: new FileBody([Buffer.from("["), requests], "application/json") as unknown as RequestInit["body"] });
    expect(response.status).toBe(200);
    expect(server.seen[0]!.body.toString()).toBe(`[${requests.text}`);
  });
});
