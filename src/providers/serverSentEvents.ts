import { StreamResponse } from "../util/StreamResponse.js";

/** One server-sent event: its `event:` field (null when it has none) and its `data:` lines joined by "\n". */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * The chunks of a streamed answer's body: straight from the socket when the model clients' transport made it
 * (`StreamResponse`), else from its web stream. A body-less answer is a bad answer, as the SDK has it.
 */
export function bodyChunks(response: Response): AsyncIterable<Uint8Array> | undefined {
  if (response instanceof StreamResponse) return response.chunks();
  return (response.body ?? undefined) as AsyncIterable<Uint8Array> | undefined;
}

/**
 * The events of a `text/event-stream` body, read as the `openai` SDK reads them (its `SSEDecoder` and
 * `LineDecoder`), so that lllm's own stream readers see what the SDK's did: lines end with "\n", "\r\n" or "\r";
 * a line starting with ":" is a comment; a field's value loses one leading space; a blank line ends an event
 * (one with neither an event name nor data is none); an event the body ends in the middle of is dropped.
 */
export async function* serverSentEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | null = null;
  let data: string[] = [];
  /** The event a line completes, if it does. */
  const take = (line: string): ServerSentEvent | undefined => {
    if (line === "") {
      if (event === null && data.length === 0) return undefined;
      const complete = { event, data: data.join("\n") };
      event = null;
      data = [];
      return complete;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    return undefined;
  };
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const newline = buffer.indexOf("\n", start);
      const carriage = buffer.indexOf("\r", start);
      const end = carriage >= 0 && (newline < 0 || carriage < newline) ? carriage : newline;
      if (end < 0) break;
      // A "\r" last in the buffer may be the first half of "\r\n": wait for the next chunk.
      if (end === carriage && end === buffer.length - 1) break;
      const next = end === carriage && buffer[end + 1] === "\n" ? end + 2 : end + 1;
      const complete = take(buffer.slice(start, end));
      start = next;
      if (complete) yield complete;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer.endsWith("\r")) {
    // The "\r" held above ends the last line after all.
    const complete = take(buffer.slice(0, -1));
    if (complete) yield complete;
  } else if (buffer !== "") {
    // A last line with no line break: no blank line follows it, so it ends no event.
    take(buffer);
  }
}
