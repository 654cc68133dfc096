import { EventSourceParserStream } from "eventsource-parser/stream";
import { describe, expect, it } from "vitest";
import { limitResponseSize, ResponseTooLargeError } from "../../src/mcp/limitResponseSize.js";

/** A `fetch` that answers with `chunks` as they are (split wherever the test says) under `contentType`. */
function answering(chunks: string[], contentType: string): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": contentType } });
  };
}

const LIMIT = 100;
const big = "x".repeat(150);

describe("limitResponseSize: an event stream", () => {
  it("passes events on whole, however the chunks split them, with CR LF, LF or CR line ends", async () => {
    const stream = 'data: {"a":1}\r\n\r\nevent: message\ndata: {"b":2}\n\ndata: {"c":3}\r\r';
    const chunks = [...stream]; // one character a chunk
    const response = await limitResponseSize(answering(chunks, "text/event-stream"), LIMIT)("http://127.0.0.1:9/mcp", { method: "GET" });
    expect(await response.text()).toBe(stream);
  });

  it("hands each event to the SDK's parser as soon as it ends, with CR LF or LF line ends, however the stream is cut", async () => {
    // The parser waits at a trailing CR to see whether an LF follows: an event passed on without the LF of its last
    // CR LF reached the SDK only with the next event (a POST's answer, the last of its stream, never).
    // (A stream of bare CRs waits in the parser for its next byte in any case: a CR may begin a CR LF.)
    for (const end of ["\r\n", "\n"]) {
      const event = `event: message${end}data: {"jsonrpc":"2.0","id":1,"result":{}}${end}${end}`;
      for (const chunks of [[event], [...event], [event.slice(0, -1), event.slice(-1)]]) {
        let source!: ReadableStreamDefaultController<Uint8Array>;
        // Left open, as a standing stream (or a POST's, whose server has not closed it yet) is.
        const body = new ReadableStream<Uint8Array>({ start: (controller) => void (source = controller) });
        const response = await limitResponseSize(async () => new Response(body, { headers: { "content-type": "text/event-stream" } }), LIMIT)("http://127.0.0.1:9/mcp", { method: "GET" });
        const events: string[] = [];
        const reading = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).pipeTo(new WritableStream({ write: (parsed) => void events.push(parsed.data) }));
        for (const chunk of chunks) source.enqueue(new TextEncoder().encode(chunk));
        // Every stage runs on microtasks and immediates: a few turns of the event loop let them all go.
        for (let turn = 0; turn < 20 && events.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
        expect(events, JSON.stringify(chunks)).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}']);
        source.close();
        await reading;
      }
    }
  });

  it("passes on the line end after the last event when the stream ends", async () => {
    const stream = 'data: {"a":1}\r\n\r\n';
    for (const chunks of [[stream], [...stream]]) {
      const response = await limitResponseSize(answering(chunks, "text/event-stream"), LIMIT)("http://127.0.0.1:9/mcp", { method: "GET" });
      expect(await response.text()).toBe(stream);
    }
  });

  it("answers the POSTed request in place of an event over the limit, and ends the stream", async () => {
    const post = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: {} }) };
    const response = await limitResponseSize(answering(['data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n', `data: {"jsonrpc":"2.0","id":7,"result":"${big}`, big, '"}\n\n', 'data: {"after":1}\n\n'], "text/event-stream; charset=utf-8"), LIMIT)("http://127.0.0.1:9/mcp", post);
    const text = await response.text();
    const events = text.split("\n\n").filter((event) => event !== "");
    expect(events).toHaveLength(2);
    expect(events[0]).toBe('data: {"jsonrpc":"2.0","method":"notifications/progress"}');
    const answer = JSON.parse(events[1]!.replace(/^event: message\ndata: /, "")) as { id: number; error: { message: string; data: { reason: string; limit: number } } };
    expect(answer.id).toBe(7);
    expect(answer.error.data).toMatchObject({ reason: "message_too_large", limit: LIMIT });
    expect(text).not.toContain("xxxx");
  });

  it("on a stream of no request (a GET), answers the id at either end of the event, drops one without, and goes on", async () => {
    const response = await limitResponseSize(
      answering(
        [
          `event: message\ndata: {"jsonrpc":"2.0","id":"head-id","result":"${big}"}\n\n`,
          `data: {"jsonrpc":"2.0","result":{"text":"${big}"},"id":12}\r\n\r\n`,
          `data: {"jsonrpc":"2.0","method":"notifications/message","params":"${big}"}\n\n`,
          'data: {"jsonrpc":"2.0","id":3,"result":{}}\n\n',
        ],
        "text/event-stream",
      ),
      LIMIT,
    )("http://127.0.0.1:9/mcp", { method: "GET" });
    const events = (await response.text()).split("\n\n").filter((event) => event !== "");
    const ids = events.map((event) => (JSON.parse(event.replace(/^(?:event: message\n)?data: /, "")) as { id: unknown }).id);
    expect(ids).toEqual(["head-id", 12, 3]);
  });
});

describe("limitResponseSize: any other body", () => {
  it("fails past the limit with ResponseTooLargeError, and passes a body within it", async () => {
    const over = await limitResponseSize(answering(['{"jsonrpc":"2.0","id":1,"result":"', big, '"}'], "application/json"), LIMIT)("http://127.0.0.1:9/mcp");
    const error = await over.json().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).limit).toBe(LIMIT);
    const within = await limitResponseSize(answering(['{"ok":', "true}"], "application/json"), LIMIT)("http://127.0.0.1:9/mcp");
    expect(await within.json()).toEqual({ ok: true });
  });
});
