import { isPlainObject } from "../../util/isPlainObject.js";

/**
 * Why the ids a JSON-RPC request names are not acceptable, or undefined when they are. The SDK's 0.3 layer passes a
 * task's `id` and a message's `contextId` and `taskId` on as the client sent them: an object there failed the
 * request with a JavaScript error (-32603), and a `contextId` that is not a string, kept with its task in the run
 * store, stopped every later run of this home from being merged into the store.
 */
export function badRequestIds(body: unknown): string | undefined {
  if (!isPlainObject(body) || !isPlainObject(body.params)) return undefined;
  const { params } = body;
  if ("id" in params && typeof params.id !== "string") return "params.id must be a string: the id of a task";
  const message = params.message;
  if (!isPlainObject(message)) return undefined;
  for (const key of ["contextId", "taskId"]) {
    if (message[key] !== undefined && message[key] !== null && typeof message[key] !== "string") return `params.message.${key} must be a string`;
  }
  return undefined;
}
