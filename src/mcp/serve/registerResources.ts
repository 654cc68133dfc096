import { watch, type FSWatcher } from "node:fs";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { onRequest } from "./onRequest.js";
import { sdkServer } from "./sdkServer.js";
import type { ServedPackage } from "./ServedPackage.js";


/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * `resources/list`, `resources/templates/list`, `resources/read`, and `resources/subscribe` / `unsubscribe` on
 * one connection. A subscription to a file of the package (a document) watches the file and sends
 * `notifications/resources/updated` when it changes; the watchers stop with the connection.
 */
export function registerResources(server: Server, served: ServedPackage): void {
  const { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } = sdkServer();
  const describe = <T extends { name: string; title?: string; description?: string; mimeType?: string }>(item: T) => ({
    name: item.name,
    ...(item.title !== undefined ? { title: item.title } : {}),
    ...(item.description !== undefined ? { description: item.description } : {}),
    ...(item.mimeType !== undefined ? { mimeType: item.mimeType } : {}),
  });
  const resources = [...served.resources.values()].map((resource) => ({ uri: resource.uri, ...describe(resource) }));
  const templates = served.templates.map((template) => ({ uriTemplate: template.uriTemplate, ...describe(template) }));
  onRequest(server, ListResourcesRequestSchema, () => ({ resources }));
  onRequest(server, ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: templates }));

  const find = (uri: string): { read(): Promise<unknown[]>; file?: string } => {
    const resource = served.resources.get(uri);
    if (resource) return resource;
    for (const template of served.templates) {
      const variables = template.match(uri);
      if (variables) return { read: () => template.read(uri, variables) };
    }
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
  };
  onRequest(server, ReadResourceRequestSchema, async (request) => {
    const target = find(request.params.uri);
    try {
      return { contents: (await target.read()) as never };
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `Reading ${request.params.uri} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  });

  const watchers = new Map<string, FSWatcher | undefined>();
  onRequest(server, SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    const target = find(uri);
    if (!watchers.has(uri)) {
      let watcher: FSWatcher | undefined;
      if (target.file) {
        try {
          watcher = watch(target.file, { persistent: false }, () => void server.sendResourceUpdated({ uri }).catch(() => undefined));
        } catch {
          watcher = undefined; // the file went away: nothing to watch, the subscription still stands
        }
      }
      watchers.set(uri, watcher);
    }
    return {};
  });
  onRequest(server, UnsubscribeRequestSchema, (request) => {
    watchers.get(request.params.uri)?.close();
    watchers.delete(request.params.uri);
    return {};
  });
  const previous = server.onclose;
  server.onclose = () => {
    for (const watcher of watchers.values()) watcher?.close();
    watchers.clear();
    previous?.();
  };
}
