import diagnostics_channel from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "../../src/providers/index.js";
import { nodeHttpFetch } from "../../src/util/nodeHttpFetch.js";
import { REQUEST_SENT_CHANNEL } from "../../src/util/requestSentChannel.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    ),
  );
});

/** A server on 127.0.0.1 that counts the connections it accepted. */
async function serve(handler: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => handler(request, response, body));
  });
  server.on("connection", () => (connections += 1));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const manual = (init: RequestInit = {}): RequestInit => ({ ...init, redirect: "manual" });

describe("nodeHttpFetch (the model clients' transport)", () => {
  it("sends the method, headers and body, and reuses one connection for requests one after another", async () => {
    const seen: Array<{ method?: string; type?: string; length?: string; body: string }> = [];
    const server = await serve((request, response, body) => {
      seen.push({ method: request.method, type: request.headers["content-type"], length: request.headers["content-length"], body });
      response.writeHead(201, { "content-type": "application/json", "x-extra": "1" });
      response.end(JSON.stringify({ echo: body }));
    });
    for (let index = 0; index < 5; index += 1) {
      const response = await nodeHttpFetch(`${server.url}/v1/chat`, manual({ method: "post", headers: { "content-type": "application/json" }, body: `{"n":${index}}` }));
      expect(response.status).toBe(201);
      expect(response.headers.get("x-extra")).toBe("1");
      expect(response.url).toBe(`${server.url}/v1/chat`);
      expect(await response.json()).toEqual({ echo: `{"n":${index}}` });
    }
    expect(seen[4]).toEqual({ method: "POST", type: "application/json", length: "7", body: '{"n":4}' });
    expect(server.connections()).toBe(1);
  });

  it("decodes a gzip answer, as fetch does", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      response.end(gzipSync(JSON.stringify({ text: "unzipped" })));
    });
    expect(await (await nodeHttpFetch(server.url, manual())).json()).toEqual({ text: "unzipped" });
  });

  it("streams the body as it arrives (server-sent events)", async () => {
    let finish!: () => void;
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
      finish = () => response.end("data: last\n\n");
    });
    const response = await nodeHttpFetch(server.url, manual());
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe("data: first\n\n");
    finish();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value).toString();
    expect(rest).toBe("data: last\n\n");
  });

  it("returns a redirect as is, never following it (fetchWithinOrigin decides)", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(307, { location: "http://elsewhere.invalid/" });
      response.end();
    });
    const response = await nodeHttpFetch(server.url, manual({ method: "POST", body: "x" }));
    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("http://elsewhere.invalid/");
  });

  it("fails as fetch fails: a refused connection is TypeError('fetch failed') with the cause; an abort rejects with the reason", async () => {
    const closed = await serve(() => undefined);
    const port = new URL(closed.url).port;
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const refused = await nodeHttpFetch(`http://127.0.0.1:${port}/`, manual()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(((refused as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");

    const slow = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const pending = nodeHttpFetch(slow.url, manual({ signal: controller.signal }));
    const reason = new Error("stop now");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const aborted = nodeHttpFetch(slow.url, manual({ signal: AbortSignal.abort() }));
    await expect(aborted).rejects.toMatchObject({ name: "AbortError" });
  });

  it("an abort while the body streams fails the body", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
    });
    const controller = new AbortController();
    const response = await nodeHttpFetch(server.url, manual({ signal: controller.signal }));
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
  });

  it("a small answer of known length arrives whole; one cut short fails as fetch fails, and an abort before it ends rejects with the reason", async () => {
    const whole = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "11" });
      response.write('{"a":');
      setTimeout(() => response.end("[1,2]}"), 20);
    });
    const answer = await nodeHttpFetch(whole.url, manual());
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(answer.url).toBe(new URL(whole.url).href);
    expect(await answer.json()).toEqual({ a: [1, 2] });

    const cut = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"a":');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const failed = await nodeHttpFetch(cut.url, manual()).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as Error).message).toBe("fetch failed");

    const stalled = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"a":');
    });
    const controller = new AbortController();
    const pending = nodeHttpFetch(stalled.url, manual({ signal: controller.signal }));
    // The head has come (the server wrote it): abort while the body is still on its way.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error("stop now");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("a whole answer of unknown length (chunked, or gzip) is read as fetch reads it: headers by name, the body once", async () => {
    const server = await serve((request, response) => {
      response.setHeader("content-type", "application/json");
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      response.setHeader("x-multi", ["one", "two"]);
      if (request.url === "/gzip") {
        response.setHeader("content-encoding", "gzip");
        return void response.end(gzipSync('\uFEFF{"text":"zipped"}'));
      }
      response.write('{"text":');
      setTimeout(() => response.end('"chunked"}'), 20);
    });
    const chunked = await nodeHttpFetch(`${server.url}/`, manual());
    expect(chunked.ok).toBe(true);
    expect(chunked.headers.get("Content-Type")).toBe("application/json");
    expect(chunked.headers.get("x-multi")).toBe("one, two");
    expect(chunked.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect([...chunked.headers].map(([name]) => name)).toEqual([...new Response(null, { headers: [...chunked.headers] }).headers].map(([name]) => name));
    expect(() => chunked.headers.set("x", "y")).toThrow(TypeError);
    const copy = chunked.clone();
    expect(await chunked.json()).toEqual({ text: "chunked" });
    expect(chunked.bodyUsed).toBe(true);
    await expect(chunked.text()).rejects.toBeInstanceOf(TypeError);
    expect(await new Response(copy.body).text()).toBe('{"text":"chunked"}');
    // Decoded, and the byte order mark dropped, as fetch's text() does.
    expect(await (await nodeHttpFetch(`${server.url}/gzip`, manual())).json()).toEqual({ text: "zipped" });
  });

  it("an answer longer than the read-ahead (1 MB, chunked) streams, every byte in order", async () => {
    const part = Buffer.alloc(256 * 1024, "x");
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      let sent = 0;
      const next = (): void => {
        if (sent === 6) return void response.end("end");
        sent += 1;
        response.write(part, next);
      };
      next();
    });
    const response = await nodeHttpFetch(server.url, manual());
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(6 * part.length + 3);
    expect(bytes.subarray(-3).toString()).toBe("end");
    expect(bytes.subarray(0, -3).every((byte) => byte === 0x78)).toBe(true);
  });

  it("carries the OpenAI models' calls instead of Node's fetch, and says when a request is on the wire", async () => {
    const answer = { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(answer));
    });
    const published: string[] = [];
    const onOurs = (): number => published.push("lllm");
    const onUndici = (): number => published.push("undici");
    diagnostics_channel.subscribe(REQUEST_SENT_CHANNEL, onOurs);
    diagnostics_channel.subscribe("undici:client:sendHeaders", onUndici);
    try {
      const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: `${server.url}/v1` }, env: { OPENAI_API_KEY: "test-key" } });
      for (let index = 0; index < 3; index += 1) expect((await model.generate({ messages: [{ role: "user", content: "hi" }] })).message.content).toBe("hi");
    } finally {
      diagnostics_channel.unsubscribe(REQUEST_SENT_CHANNEL, onOurs);
      diagnostics_channel.unsubscribe("undici:client:sendHeaders", onUndici);
    }
    expect(published).toEqual(["lllm", "lllm", "lllm"]);
    expect(server.connections()).toBe(1);
  });
});
