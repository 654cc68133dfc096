import { AgentCard, Extensions } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion, type User } from "@a2a-js/sdk/server";
import { escapeControlCharacters } from "../../util/escapeControlCharacters.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { redactSecrets } from "../../util/redact.js";
import { newWireId } from "../newWireId.js";
import { HttpError } from "../HttpError.js";
import type { RouteRequest } from "../Route.js";
import type { ServeContext } from "../ServeContext.js";
import { sendJson } from "../sendJson.js";
import { agentCard, legacyAgentCard } from "./agentCard.js";
import { A2aTasks } from "./A2aTasks.js";
import { badRequestIds } from "./badRequestIds.js";
import { ROUTE_REQUEST, STREAMING, TacticExecutor } from "./TacticExecutor.js";
import { TaskRequestHandler } from "./TaskRequestHandler.js";

/** JSON-RPC's code of an internal error. */
const INTERNAL_ERROR = -32603;

/** The JSON-RPC methods that answer with a stream of events (A2A 1.0's names and 0.3's). */
const STREAMING_METHODS = new Set(["SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"]);

/** Whoever sent the server's token (one token for every client: no finer identity). */
const CLIENT: User = { isAuthenticated: true, userName: "lllm-client" };

/** What the A2A routes do, once the SDK is loaded (on the first A2A request). */
export interface A2aServer {
  /** The card as JSON: A2A 1.0's (ProtoJSON) when the client asks for 1.0, else 0.3's. */
  card(baseUrl: string, version: string | undefined): Record<string, unknown>;
  /** Answer one JSON-RPC request (a JSON body, or an SSE stream for the streaming methods). */
  rpc(request: RouteRequest): Promise<void>;
}

/**
 * The SDK's server pieces over the served tactics: its `DefaultRequestHandler` (task lifecycle, event bus,
 * cancellation) with lllm's executor and task store, behind its JSON-RPC transport handlers for A2A 1.0 and, through
 * its compatibility layer, 0.3 (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`). A request without
 * an `A2A-Version` header is 0.3, as the SDK's own servers take it.
 */
export function createA2aServer(context: ServeContext): A2aServer {
  const tasks = new A2aTasks({ ...(context.store ? { store: context.store } : {}), warn: context.warn });
  const cardFor = (baseUrl: string): AgentCard => agentCard({ models: context.models.list(), baseUrl: context.publicUrl ?? baseUrl, auth: context.auth });
  const handler = new TaskRequestHandler(cardFor("http://localhost"), tasks, new TacticExecutor(context, tasks));
  const current = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);

  return {
    card(baseUrl, version) {
      const card = cardFor(baseUrl);
      return version === undefined || version.startsWith("0.") ? legacyAgentCard(card) : (AgentCard.toJSON(card) as Record<string, unknown>);
    },
    async rpc(request) {
      const headers = request.request.headers;
      const version = typeof headers["a2a-version"] === "string" && headers["a2a-version"] !== "" ? headers["a2a-version"] : undefined;
      const useLegacy = version === undefined || version === "0.3";
      const mapError = (error: unknown): { code: number; message: string } => withoutInternals((useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError)(error), context);
      let body: unknown;
      try {
        body = await request.body();
      } catch (error) {
        if (error instanceof HttpError && error.code === "invalid_json") return sendJson(request.response, 200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: error.message } });
        throw error;
      }
      const id = typeof body === "object" && body !== null && "id" in body ? (body as { id: unknown }).id : null;
      const method = typeof body === "object" && body !== null && "method" in body ? (body as { method: unknown }).method : undefined;
      const badIds = badRequestIds(body);
      if (badIds !== undefined) return sendJson(request.response, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: badIds } });
      const state = new Map<string, unknown>([
        [ROUTE_REQUEST, request],
        [STREAMING, typeof method === "string" && STREAMING_METHODS.has(method)],
      ]);
      const extensionsHeader = headers["a2a-extensions"] ?? headers["x-a2a-extensions"];
      const call = new ServerCallContext({ user: CLIENT, ...(version !== undefined ? { requestedVersion: version } : {}), state, ...(typeof extensionsHeader === "string" ? { requestedExtensions: Extensions.parseServiceParameter(extensionsHeader) } : {}) });
      let answer: Awaited<ReturnType<JsonRpcTransportHandler["handle"]>>;
      try {
        validateVersion(call.requestedVersion, await handler.getAgentCard(), "JSONRPC");
        answer = await (useLegacy ? legacy : current).handle(withoutReferenceTasks(body) as Record<string, unknown>, call);
      } catch (error) {
        return sendJson(request.response, 200, { jsonrpc: "2.0", id, error: mapError(error) });
      }
      if (!isStream(answer)) {
        // The SDK's handler answers most failures itself, as an error object.
        const failed = answer as { error?: { code: number; message: string } };
        return sendJson(request.response, 200, failed.error ? { ...failed, error: withoutInternals(failed.error, context) } : answer);
      }
      const response = request.response;
      response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "X-Accel-Buffering": "no" });
      try {
        for await (const event of answer) {
          if (response.destroyed) break;
          response.write(`data: ${JSON.stringify(event)}\n\n`);
        }
      } catch (error) {
        if (!response.destroyed) response.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: mapError(error) })}\n\n`);
      } finally {
        if (!response.destroyed && !response.writableEnded) response.end();
      }
    },
  };
}

/**
 * A JSON-RPC error as the client reads it. One of A2A's own (a task not found, not cancelable…) as it is; an internal
 * error is lllm's own failure (its run store damaged, a defect), whose message names the server's files: the client
 * reads that it failed and a request id, the server's log why, under that id.
 */
function withoutInternals<T extends { code: number; message: string }>(error: T, context: ServeContext): T | { code: number; message: string } {
  if (error.code !== INTERNAL_ERROR) return error;
  const requestId = newWireId("req_");
  context.warn(`A2A request ${requestId} failed: ${escapeControlCharacters(redactSecrets(error.message), { all: true })}`);
  return { code: INTERNAL_ERROR, message: `internal error; the server's log has the details (request ${requestId})` };
}

/**
 * The request without its message's `referenceTaskIds`: a task here takes no reference tasks (the executor reads the
 * message only), and the SDK looks each one up and prints the ids it cannot find raw on stderr, where an id with a
 * line break would forge lines of lllm's own.
 */
function withoutReferenceTasks(body: unknown): unknown {
  const message = isPlainObject(body) && isPlainObject(body.params) ? body.params.message : undefined;
  if (isPlainObject(message)) delete message.referenceTaskIds;
  return body;
}

function isStream<T>(value: T | AsyncGenerator<unknown, void, undefined>): value is AsyncGenerator<unknown, void, undefined> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
