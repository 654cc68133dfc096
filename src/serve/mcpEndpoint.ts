import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServedPackage } from "../mcp/serve/ServedPackage.js";
import { serverFor } from "../mcp/serve/createPackageServer.js";
import { mcpHttpHandler } from "../mcp/serve/serveHttp.js";

/** The MCP endpoint of `lllm serve`: the handler to mount at `/mcp`, and how to end its sessions. */
export interface McpEndpoint {
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

/**
 * The served packages over MCP at `/mcp`, as `lllm mcp serve --http` serves one (the same handler: sessions, Host
 * and Origin checks, the token): several packages are served as one, the first of a name winning.
 */
export function mcpEndpoint(packages: ServedPackage[], options: { host: string; token?: string }): McpEndpoint {
  const served = packages.length === 1 ? packages[0]! : mergePackages(packages);
  const { handle, closeSessions } = mcpHttpHandler({ host: options.host, newServer: () => serverFor(served), ...(options.token !== undefined ? { token: options.token } : {}) });
  return { handle, close: closeSessions };
}

function mergePackages(packages: ServedPackage[]): ServedPackage {
  const merged: ServedPackage = { name: "lllm-serve", version: packages[0]?.version ?? "0.0.0", tools: new Map(), prompts: new Map(), resources: new Map(), templates: [], cwd: packages[0]?.cwd ?? process.cwd(), skipped: [] };
  for (const pkg of packages) {
    for (const [name, tool] of pkg.tools) if (!merged.tools.has(name)) merged.tools.set(name, tool);
    for (const [name, prompt] of pkg.prompts) if (!merged.prompts.has(name)) merged.prompts.set(name, prompt);
    for (const [uri, resource] of pkg.resources) if (!merged.resources.has(uri)) merged.resources.set(uri, resource);
    merged.templates.push(...pkg.templates);
  }
  return merged;
}
