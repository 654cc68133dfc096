import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { requireNow, requireVendored } from "../../util/lazyModule.js";

/** What lllm's MCP server takes from the SDK: its schemas and errors, its Server, UriTemplate, and its zod. */
export type SdkServer = typeof import("@modelcontextprotocol/sdk/types.js") & { Server: typeof Server; UriTemplate: typeof UriTemplate; z: typeof import("zod/v4") };

let server: SdkServer | undefined;
let http: { StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport } | undefined;

/**
 * The MCP SDK's server side, loaded when first asked for: one file (dist/vendor/mcp-server.cjs, with its compiled
 * code kept between runs) when lllm runs built, the SDK's CommonJS build from node_modules when tests run src/.
 * Every module of the server side takes it from here, so that its schemas, errors and Server are one copy.
 */
export function sdkServer(): SdkServer {
  return (server ??= requireVendored<SdkServer>("mcp-server", () => ({
    ...requireNow<typeof import("@modelcontextprotocol/sdk/types.js")>("@modelcontextprotocol/sdk/types.js"),
    Server: requireNow<typeof import("@modelcontextprotocol/sdk/server/index.js")>("@modelcontextprotocol/sdk/server/index.js").Server,
    UriTemplate: requireNow<typeof import("@modelcontextprotocol/sdk/shared/uriTemplate.js")>("@modelcontextprotocol/sdk/shared/uriTemplate.js").UriTemplate,
    z: requireNow<typeof import("zod/v4")>("zod/v4"),
  })));
}

/** The SDK's Streamable HTTP transport (it shares the SDK's types with `sdkServer`), loaded at the first session. */
export function sdkServerHttp(): { StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport } {
  return (http ??= requireVendored("mcp-server-http", () => requireNow<typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js")>("@modelcontextprotocol/sdk/server/streamableHttp.js")));
}
