/**
 * What lllm's own `Response`s share (`WholeResponse`, `StreamResponse`): made without Node's `fetch`, whose `Response`
 * and `Headers` load its bundled undici (some 12 ms of CPU). The body is read once, as `fetch`'s own; how it is held
 * and streamed is the subclass's.
 */
export abstract class BodyResponse implements Response {
  readonly type = "default" as const;
  readonly redirected = false;
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: Headers;

  constructor(init: { status: number; statusText: string; headers: Headers; url: string }) {
    this.status = init.status;
    this.ok = init.status >= 200 && init.status <= 299;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
  }

  abstract get body(): ReadableStream<Uint8Array>;
  abstract get bodyUsed(): boolean;
  abstract clone(): Response;
  /** The whole body, once: a body read a second time fails as fetch's does. */
  protected abstract consume(): Promise<Uint8Array>;

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.consume();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.consume()], { type: this.headers.get("content-type") ?? "" });
  }

  async formData(): Promise<FormData> {
    // Never asked of a model's answer: Node's own Response parses it (and loads fetch) when something does.
    const bytes = await this.consume();
    return new Response(bytes, { status: this.status, headers: [...this.headers] }).formData();
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async text(): Promise<string> {
    // As fetch decodes a body: UTF-8, a byte order mark dropped, bad sequences replaced.
    return new TextDecoder().decode(await this.consume());
  }
}
