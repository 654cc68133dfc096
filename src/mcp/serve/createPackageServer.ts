import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Registry } from "../../registry/Registry.js";
import type { FunctionTool } from "../../tools/FunctionTool.js";
import { sdkServer } from "./sdkServer.js";
import type { ConnectionState } from "./mcpToolContext.js";
import { packagePrompts } from "./packagePrompts.js";
import { packageResources } from "./packageResources.js";
import { packageTools } from "./packageTools.js";
import { registerPrompts } from "./registerPrompts.js";
import { registerResources } from "./registerResources.js";
import { registerTools } from "./registerTools.js";
import type { ServedPackage } from "./ServedPackage.js";

export type { ServedPackage } from "./ServedPackage.js";

/** Options of `createPackageServer` and `loadServedPackage`. */
export interface PackageServerOptions {
  /**
   * More tools to serve next to the package's own: the seam for tactics served as tools (build them with
   * `tacticAsFunction`). A name clash with a package tool keeps the package tool.
   */
  extraTools?: FunctionTool[];
  /** The working directory tools run in. Default: this process's. */
  cwd?: string;
}

/**
 * Load what a package serves over MCP: its tools (declarations bound as a tactic would bind them) and the extra
 * tools, its prompts (`prompts/`), and its resources (documents, proxies' API docs, `resources/` definitions).
 */
export async function loadServedPackage(registry: Registry, packageName: string, options: PackageServerOptions = {}): Promise<ServedPackage> {
  const { tools, unbound } = packageTools(registry, packageName);
  const pkg = registry.packages.get(packageName)!; // packageTools throws for an unknown package
  const skipped: ServedPackage["skipped"] = unbound.map((ref) => ({ what: `tool \`${ref}\``, reason: "it is a declaration with no implementation among the loaded packages" }));
  const byName = new Map<string, FunctionTool>();
  for (const tool of [...tools, ...(options.extraTools ?? [])]) if (!byName.has(tool.name)) byName.set(tool.name, tool);

  const prompts = packagePrompts(pkg);
  for (const { ref, reason } of prompts.skipped) skipped.push({ what: `prompt \`${ref}\``, reason });
  // Proxies load (and their files are read) only for a package that has some.
  const proxies = pkg.proxies.size > 0 ? (await (await import("../../registry/loadProxies.js")).loadProxies(registry)).filter((definition) => definition.source?.packageName === pkg.name) : [];
  const resources = await packageResources(pkg, proxies);
  for (const { file, reason } of resources.skipped) skipped.push({ what: `resource file ${file}`, reason });
  return {
    name: pkg.name,
    version: pkg.manifest.version ?? "0.0.0",
    ...(pkg.manifest.description ? { description: pkg.manifest.description } : {}),
    tools: byName,
    prompts: new Map(prompts.prompts.map((prompt) => [prompt.name, prompt])),
    resources: new Map(resources.resources.map((resource) => [resource.uri, resource])),
    templates: resources.templates,
    cwd: options.cwd ?? process.cwd(),
    skipped,
  };
}

/**
 * An MCP server for one connection (the SDK's low-level `Server`, not connected yet) over a loaded package. Each
 * connection (a stdio client, an HTTP session) gets its own: its log level and subscriptions are its own.
 * - tools: `tools/list` gives each tool's schema as written; `tools/call` runs `tool.call()` with a context whose
 *   progress, log, sampling and elicitation go to the client. An unknown tool or malformed params are JSON-RPC
 *   errors (-32602); whatever goes wrong in a call is an `isError` result for the client's model.
 * - prompts, resources (with templates and subscriptions), completions of prompt arguments and template
 *   variables, and `logging/setLevel`.
 */
export function serverFor(served: ServedPackage): Server {
  // The SDK is required here, synchronously, rather than imported at the top: `import "lllm"` must not load it.
  const { Server } = sdkServer();
  const hasPrompts = served.prompts.size > 0;
  const hasResources = served.resources.size > 0 || served.templates.length > 0;
  const server = new Server(
    { name: `lllm-${served.name}`, version: served.version },
    {
      capabilities: {
        tools: {},
        logging: {},
        ...(hasPrompts ? { prompts: {} } : {}),
        ...(hasResources ? { resources: { subscribe: true } } : {}),
        ...(hasPrompts || served.templates.length > 0 ? { completions: {} } : {}),
      },
      ...(served.description ? { instructions: served.description } : {}),
    },
  );
  const state: ConnectionState = {};
  registerTools(server, served, state);
  if (hasPrompts || served.templates.length > 0) registerPrompts(server, served);
  if (hasResources) registerResources(server, served);
  return server;
}

/** `serverFor(await loadServedPackage(...))`: one server for one connection. */
export async function createPackageServer(registry: Registry, packageName: string, options: PackageServerOptions = {}): Promise<Server> {
  return serverFor(await loadServedPackage(registry, packageName, options));
}
