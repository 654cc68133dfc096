/**
 * The diagnostics channel the model clients' transport (`nodeHttpFetch`) publishes on when a request has been
 * written to the socket, as undici publishes `undici:client:sendHeaders` for Node's fetch: the run store opens
 * meanwhile. A module of its own so that the store need not load the transport to listen.
 */
export const REQUEST_SENT_CHANNEL = "lllm:http:request-sent";
