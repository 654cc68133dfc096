import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel } from "../../src/providers/index.js";
import { serverSentEvents, type ServerSentEvent } from "../../src/providers/serverSentEvents.js";

/** The events of a body that comes in these pieces (strings, or bytes for a character cut in two). */
async function eventsOf(...pieces: (string | Uint8Array)[]): Promise<ServerSentEvent[]> {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (const piece of pieces) yield typeof piece === "string" ? new TextEncoder().encode(piece) : piece;
  }
  const events: ServerSentEvent[] = [];
  for await (const event of serverSentEvents(chunks())) events.push(event);
  return events;
}

describe("server-sent events, read as the openai SDK reads them", () => {
  it("ends lines with \\n, \\r\\n or \\r, wherever the pieces are cut", async () => {
    const expected = [
      { event: null, data: "one" },
      { event: null, data: "two" },
      { event: null, data: "three" },
    ];
    expect(await eventsOf("data: one\n\ndata: two\r\n\r\ndata: three\r\r")).toEqual(expected);
    // "\r" last in a piece and "\n" first in the next are one line break, not two (which would end an event early).
    expect(await eventsOf("data: one\n\ndata: two\r", "\n\r", "\ndata: three\r", "\r")).toEqual(expected);
    expect(await eventsOf("da", "ta: one\n", "\nda", "ta: two\r\n\r\nd", "ata: three\n\n")).toEqual(expected);
  });

  it("joins data lines, keeps the event name, drops comments and one leading space", async () => {
    expect(await eventsOf(": a comment\nevent: error\ndata:  two spaces\ndata:none\n\n")).toEqual([{ event: "error", data: " two spaces\nnone" }]);
    // A blank line with nothing before it is no event; a field with no colon has an empty value.
    expect(await eventsOf("\n\ndata\n\n")).toEqual([{ event: null, data: "" }]);
  });

  it("decodes a character cut between two pieces, and drops an event the body ends in", async () => {
    const bytes = new TextEncoder().encode("data: Zürich 🌤\n\ndata: cut");
    const cut = bytes.indexOf(0xf0) + 2;
    expect(await eventsOf(bytes.slice(0, cut), bytes.slice(cut))).toEqual([{ event: null, data: "Zürich 🌤" }]);
  });
});

describe("a streamed chat answer", () => {
  it("with an error event is that API error, with the server's message, and no text is passed on", async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end('data: {"error": {"message": "The model is overloaded, try later", "type": "server_error", "code": "overloaded"}}\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: url }, env: { OPENAI_API_KEY: "test-key" }, retry: { maxRetries: 0 } });
      const pieces: string[] = [];
      const error = await model.generate({ messages: [{ role: "user", content: "Hi" }], onText: (delta) => pieces.push(delta) }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toContain("The model is overloaded, try later");
      expect(pieces).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
