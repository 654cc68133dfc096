/**
 * A `Response` for an answer already read whole (its bytes in hand), made without Node's `fetch`. Node's `Response`
 * and `Headers` are those of its bundled undici, loaded on first use with http2, tls and perf_hooks behind it: some
 * 12 ms of CPU on a quiet machine, more than the rest of a one-round `lllm run`'s model call. `nodeHttpFetch`
 * answers a model's whole reply with this; what reads it (the model clients, the SDKs, `fetchWithinOrigin`) sees a
 * `Response`: status, headers, body as text, JSON, bytes, a blob or a stream, once, as `fetch`'s own.
 */
export class WholeResponse implements Response {
  readonly type = "default" as const;
  readonly redirected = false;
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: Headers;
  #bytes: Uint8Array;
  #stream: ReadableStream<Uint8Array> | undefined;
  #used = false;

  constructor(bytes: Uint8Array, init: { status: number; statusText: string; headers: Headers; url: string }) {
    this.#bytes = bytes;
    this.status = init.status;
    this.ok = init.status >= 200 && init.status <= 299;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
  }

  /** The body as a stream, made when first asked for (the model clients read the text). */
  get body(): ReadableStream<Uint8Array> {
    if (this.#stream === undefined) {
      const bytes = this.#bytes;
      this.#stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes.length > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
    }
    return this.#stream;
  }

  get bodyUsed(): boolean {
    return this.#used || this.#stream?.locked === true;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#consume();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.#consume()], { type: this.headers.get("content-type") ?? "" });
  }

  async formData(): Promise<FormData> {
    // Never asked of a model's reply: Node's own Response parses it (and loads fetch) when something does.
    const bytes = await this.#consume();
    return new Response(bytes, { status: this.status, headers: [...this.headers] }).formData();
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async text(): Promise<string> {
    // As fetch decodes a body: UTF-8, a byte order mark dropped, bad sequences replaced.
    return new TextDecoder().decode(await this.#consume());
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new WholeResponse(this.#bytes, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url });
  }

  /** The bytes, once: a body read a second time fails as fetch's does. */
  async #consume(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (this.#stream === undefined) return this.#bytes;
    // The stream was handed out but not read: read it, as fetch would.
    const chunks: Uint8Array[] = [];
    const reader = this.#stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) chunks.push(chunk.value);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
}
