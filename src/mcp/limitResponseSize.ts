import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describeBytes, ReplyTooLarge } from "../util/ReplyTooLarge.js";
import { findId } from "./LineSplitter.js";
import { MAX_SERVER_MESSAGE_BYTES, MESSAGE_TOO_LARGE } from "./StdioProcessTransport.js";

/** How much of each end of an oversized event is kept, to find the id of the message it carried. */
const EDGE_BYTES = 512;
const LF = 10;
const CR = 13;

/**
 * An HTTP answer of an MCP server (or of its authorization server) that was larger than the limit; it was not read
 * on. A `ReplyTooLarge`, as the other transports' caps are, with the size read so far.
 */
export class ResponseTooLargeError extends ReplyTooLarge {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(limit);
    this.message = `the server's answer is larger than ${describeBytes(limit)} (the limit on one message), so it was not read on`;
    this.name = "ResponseTooLargeError";
  }
}

/**
 * `fetch` whose answers are read only up to `limit` bytes a message, the limit the stdio transport puts on one line:
 * the SDK's transports read whatever a server sends (`response.json()`, an event stream's parser buffers an event
 * until its end), so a broken or hostile server could fill lllm's memory with one answer.
 *
 * - An event stream (`text/event-stream`, a POST's answer or a standing GET) may last the whole session, so the limit
 *   is on each event. An event over it is not passed on: the request the stream answers (the POST's, else the id at
 *   either end of the event) gets an error answer with `data.reason: "message_too_large"` in its place, as from the
 *   stdio transport, and the POST's stream ends; without a request to answer, the event is dropped.
 * - Any other body (JSON, an error page) is one message: past the limit the body fails with `ResponseTooLargeError`,
 *   which the SDK's `send()` throws for the request, and the connection is dropped.
 */
export function limitResponseSize(fetchImpl: Fetch, limit: number = MAX_SERVER_MESSAGE_BYTES): Fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
    const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
    const body = type === "text/event-stream" ? response.body.pipeThrough(eventLimit(limit, requestIdsOf(init?.body))) : response.body.pipeThrough(byteLimit(limit));
    const limited = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    // The SDK reads `url` to describe a redirect it did not follow; a new Response has none of its own.
    Object.defineProperty(limited, "url", { value: response.url });
    Object.defineProperty(limited, "redirected", { value: response.redirected });
    return limited;
  };
}

/** `fetch`, or a stand-in for it. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response may not have a body (`new Response` throws). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A body of at most `limit` bytes; past it, the body fails (and the connection is dropped). */
function byteLimit(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  return new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > limit) controller.error(new ResponseTooLargeError(bytes, limit));
      else controller.enqueue(chunk);
    },
  });
}

/**
 * An event stream whose events are passed on whole, each at most `limit` bytes (see `limitResponseSize`). An event
 * ends at an empty line; lines end at CR LF, LF or CR (the SSE grammar).
 */
function eventLimit(limit: number, requestIds: Array<string | number>): TransformStream<Uint8Array, Uint8Array> {
  /** The current event's pieces, held until it ends. */
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  /** While the current event is over the limit: its first bytes, its last bytes, and its size so far. */
  let oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  let lineStart = true;
  let afterCr = false;
  /**
   * The event passed on last ended at a CR whose LF (of a CR LF) is not here yet: it goes on at once when it comes,
   * for the parser behind waits at a trailing CR to see whether an LF follows (held, the event reached the SDK only
   * with the next one: a POST's answer, its stream's last event, never did).
   */
  let endedAtCr = false;

  const answer = (controller: TransformStreamDefaultController<Uint8Array>, ids: Array<string | number>, bytes: number): void => {
    for (const id of ids) controller.enqueue(new TextEncoder().encode(`event: message\ndata: ${JSON.stringify(tooLargeAnswer(id, bytes, limit))}\n\n`));
  };
  const keep = (piece: Uint8Array): void => {
    if (piece.byteLength === 0) return;
    if (oversized) {
      oversized.bytes += piece.byteLength;
      oversized.tail = Buffer.from(Buffer.concat([oversized.tail, piece]).subarray(-EDGE_BYTES));
      return;
    }
    held.push(piece);
    heldBytes += piece.byteLength;
    if (heldBytes > limit) {
      const whole = Buffer.concat(held);
      oversized = { head: Buffer.from(whole.subarray(0, EDGE_BYTES)), tail: Buffer.from(whole.subarray(-EDGE_BYTES)), bytes: whole.length };
      held = [];
      heldBytes = 0;
    }
  };

  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      if (endedAtCr && chunk.byteLength > 0) {
        endedAtCr = false;
        if (chunk[0] === LF) {
          afterCr = false;
          controller.enqueue(chunk.subarray(0, 1));
          start = 1;
        }
      }
      for (let index = start; index < chunk.byteLength; index++) {
        const byte = chunk[index]!;
        if (byte === LF && afterCr) {
          afterCr = false; // the LF of a CR LF: its line ended at the CR
          continue;
        }
        if (byte !== LF && byte !== CR) {
          lineStart = false;
          afterCr = false;
          continue;
        }
        afterCr = byte === CR;
        if (!lineStart) {
          lineStart = true;
          continue;
        }
        // An empty line: the event ends here, with the LF of its CR LF if that is here too.
        let end = index + 1;
        if (byte === CR && end < chunk.byteLength && chunk[end] === LF) {
          end += 1;
          afterCr = false;
        }
        endedAtCr = byte === CR && end === index + 1;
        keep(chunk.subarray(start, end));
        start = end;
        index = end - 1;
        if (oversized) {
          const { bytes } = oversized;
          const found = requestIds.length > 0 ? requestIds : idsOfEvent(oversized);
          oversized = undefined;
          answer(controller, found, bytes);
          if (requestIds.length > 0) {
            controller.terminate();
            return;
          }
        } else {
          for (const piece of held) controller.enqueue(piece);
        }
        held = [];
        heldBytes = 0;
      }
      keep(chunk.subarray(start));
      // A POST's stream answers its own requests: they are answered now, and the rest of the stream is not read.
      if (oversized && requestIds.length > 0) {
        answer(controller, requestIds, oversized.bytes);
        controller.terminate();
      }
    },
    // The stream's end: what is held under the limit goes on (an event without its empty line, which the parser
    // drops, or the line ends after the last one).
    flush(controller) {
      if (!oversized) for (const piece of held) controller.enqueue(piece);
    },
  });
}

/** The id of the message an oversized event carried, from the start of its `data` or the end of the event. */
function idsOfEvent(event: { head: Buffer; tail: Buffer }): Array<string | number> {
  const head = event.head.toString("utf8");
  const data = /(?:^|[\r\n])data: ?/.exec(head);
  const id = (data ? findId(head.slice(data.index + data[0].length)) : undefined) ?? findId(event.tail.toString("utf8"));
  return id === undefined ? [] : [id];
}

/** The error answer that stands in for an answer over the limit, as the stdio transport gives it. */
function tooLargeAnswer(id: string | number, bytes: number, limit: number): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: ErrorCode.InternalError,
      message: `the server's answer is larger than ${limit / 2 ** 20} MB (the limit on one message), so it was dropped`,
      data: { reason: MESSAGE_TOO_LARGE, bytes, limit },
    },
  };
}

/** The ids of the requests in a POST's JSON-RPC body (one message or a batch); none for anything else. */
function requestIdsOf(body: unknown): Array<string | number> {
  if (typeof body !== "string") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: Array<string | number> = [];
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) continue;
    const id = (message as { id: unknown }).id;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
  }
  return ids;
}
