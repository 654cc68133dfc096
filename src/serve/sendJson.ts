import type { ServerResponse } from "node:http";
import { HttpError } from "./HttpError.js";

/** Answer with a JSON body (unless the connection is gone). */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(text)) }).end(text);
}

/** Answer with an error in OpenAI's shape; on a stream already begun, as an SSE `error` event before the end. */
export function sendError(response: ServerResponse, error: HttpError): void {
  if (!response.headersSent) return sendJson(response, error.status, error.toJSON(), error.headers);
  if (!response.writableEnded && !response.destroyed) response.end(`data: ${JSON.stringify(error.toJSON())}\n\n`);
}

export { HttpError };
