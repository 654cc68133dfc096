import { Readable } from "node:stream";
import { BodyResponse } from "./BodyResponse.js";

/**
 * A `Response` whose body streams from node:http's answer (a stream of events, or a body past the read-ahead), made
 * without Node's `fetch`, as `WholeResponse` is for a body read whole. Node's `Response` would load its bundled
 * undici, and its body, a web stream over the socket, costs each chunk several layers of promises. lllm's own
 * readers take the chunks straight from the socket (`chunks()`, see `bodyChunks`); anything else (an SDK, a caller
 * of `fetch`) gets the web stream, made when first asked for.
 */
export class StreamResponse extends BodyResponse {
  readonly #stream: Readable;
  #web: ReadableStream<Uint8Array> | undefined;
  #used = false;

  constructor(stream: Readable, init: { status: number; statusText: string; headers: Headers; url: string }) {
    super(init);
    this.#stream = stream;
  }

  /** The body as a web stream (made on first use: lllm's own readers take `chunks()`). */
  get body(): ReadableStream<Uint8Array> {
    if (this.#web === undefined) {
      if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
      this.#web = Readable.toWeb(this.#stream) as unknown as ReadableStream<Uint8Array>;
    }
    return this.#web;
  }

  get bodyUsed(): boolean {
    return this.#used || this.#web?.locked === true;
  }

  /**
   * The body's chunks as they come from the socket, once. An abort or a broken connection fails the iteration with
   * the stream's error, as reading `fetch`'s body would.
   */
  chunks(): AsyncIterable<Uint8Array> {
    if (this.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
    if (this.#web !== undefined) return this.#web as unknown as AsyncIterable<Uint8Array>;
    this.#used = true;
    return this.#stream;
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    // Rare (no model client clones an answer): the web stream in two, this one reading the first.
    const [mine, theirs] = this.body.tee();
    this.#web = mine;
    return new Response(theirs, { status: this.status, statusText: this.statusText, headers: [...this.headers] });
  }

  protected async consume(): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.chunks()) chunks.push(chunk);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
}
