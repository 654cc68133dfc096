/**
 * An HTTP proxy (HTTPS_PROXY, HTTP_PROXY) that could not be reached, or that answered CONNECT with anything but
 * 200 (`status`): no tunnel, and nothing of the request was sent.
 */
export class ProxyFailed extends Error {
  constructor(
    readonly proxy: string,
    readonly status: number | undefined,
    detail: string,
    options?: { cause: unknown },
  ) {
    super(`the proxy ${proxy} ${detail}`, options);
    this.name = "ProxyFailed";
  }
}
