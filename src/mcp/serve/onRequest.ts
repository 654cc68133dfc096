import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type * as Zod from "zod/v4";
import { sdkServer } from "./sdkServer.js";

type RequestSchema = Zod.ZodObject<{ method: Zod.ZodLiteral<string> }>;
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * `server.setRequestHandler(schema, handler)`, except that a request whose params do not fit the schema is a
 * JSON-RPC invalid-params error (-32602), as MCP asks. The SDK parses before the handler and lets the parse
 * error out as an internal error (-32603); here the SDK is given a schema that only names the method, and the
 * real one is checked inside.
 */
export function onRequest<S extends RequestSchema>(server: Server, schema: S, handler: (request: Zod.infer<S>, extra: Extra) => unknown): void {
  const { ErrorCode, McpError, z } = sdkServer();
  const method = schema.shape.method.value;
  const named = z.looseObject({ method: z.literal(method) });
  server.setRequestHandler(named as never, ((request: unknown, extra: Extra) => {
    const parsed = schema.safeParse(request);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`).join("; ");
      throw new McpError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${problems}`);
    }
    return handler(parsed.data, extra);
  }) as never);
}
