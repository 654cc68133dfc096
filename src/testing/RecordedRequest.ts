import type { IncomingHttpHeaders } from "node:http";

/** A request body as the mock received it (parsed JSON); the common fields are typed for convenience. */
export interface MockRequestBody {
  model?: string;
  messages?: Array<Record<string, unknown>>;
  input?: unknown;
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the mock received, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** The path without the query, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-case header names, as node gives them (`authorization: Bearer …`). */
  headers: IncomingHttpHeaders;
  body: MockRequestBody;
}
