import { BodyResponse } from "./BodyResponse.js";

/**
 * A `Response` for an answer already read whole (its bytes in hand), made without Node's `fetch` (see BodyResponse):
 * Node's would cost more than the rest of a one-round `lllm run`'s model call. `nodeHttpFetch` answers a model's
 * whole reply with this; what reads it (the model clients, the SDKs, `fetchWithinOrigin`) sees a `Response`:
 * status, headers, body as text, JSON, bytes, a blob or a stream, once, as `fetch`'s own.
 */
export class WholeResponse extends BodyResponse {
  #bytes: Uint8Array;
  #stream: ReadableStream<Uint8Array> | undefined;
  #used = false;

  constructor(bytes: Uint8Array, init: { status: number; statusText: string; headers: Headers; url: string }) {
    super(init);
    this.#bytes = bytes;
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

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new WholeResponse(this.#bytes, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url });
  }

  protected async consume(): Promise<Uint8Array> {
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
