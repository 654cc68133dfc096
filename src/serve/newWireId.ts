import { randomBytes } from "node:crypto";

/** A fresh id for an object on the wire: `chatcmpl-…`, `resp_…`, `msg_…`. */
export function newWireId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}
