import type { IncomingMessage } from "node:http";
import type { MockRequestBody, RecordedRequest } from "./RecordedRequest.js";
import { readBody } from "./readBody.js";

/** A request to a mock server, read whole and already recorded. */
export interface MockRequest {
  /** The request's URL (path and query) against 127.0.0.1. */
  url: URL;
  record: RecordedRequest;
  /** False when the body was not JSON: it is recorded as `{ raw: text }`, and the mock answers 400 in its own error shape. */
  isJson: boolean;
}

/**
 * Read a request's body, parse it as JSON (an empty body is `{}`), and record it in `requests`, in arrival order,
 * whether or not it parsed: a test sees every request a mock received, failed ones included.
 */
export async function readMockRequest(request: IncomingMessage, requests: RecordedRequest[]): Promise<MockRequest> {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const text = await readBody(request);
  let body: MockRequestBody = {};
  let isJson = true;
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text) as MockRequestBody;
    } catch {
      body = { raw: text };
      isJson = false;
    }
  }
  const record: RecordedRequest = { method: request.method ?? "", path: url.pathname, headers: request.headers, body };
  requests.push(record);
  return { url, record, isJson };
}
