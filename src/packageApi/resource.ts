import { ConfigError } from "../errors.js";

/**
 * What reading a resource gives: text, bytes (sent as base64), or the contents with their own MIME type. The
 * resource's `mimeType` applies when the contents do not name one.
 */
export type ResourceReadResult = string | Uint8Array | { text: string; mimeType?: string } | { blob: Uint8Array | string; mimeType?: string };

/** Fields every resource and template has, shown to MCP clients. */
interface ResourceFields {
  /** A short name, unique among the package's resources. */
  name: string;
  /** A human-readable name, for clients that show resources. */
  title?: string;
  description?: string;
  /** The MIME type of the contents (`text/plain`, `image/png`, `application/json`…). */
  mimeType?: string;
}

/** A resource at a fixed URI. */
export interface ResourceSpec extends ResourceFields {
  /** Any absolute URI: `test://static-text`, `https://…`, `docs://guide`. */
  uri: string;
  /** Called on every `resources/read`. */
  read: () => ResourceReadResult | Promise<ResourceReadResult>;
}

/** Resources whose URIs follow an RFC 6570 template: `test://template/{id}/data`. */
export interface ResourceTemplateSpec extends ResourceFields {
  uriTemplate: string;
  /** Called with the URI read and the values of its template variables. */
  read: (uri: string, variables: Record<string, string>) => ResourceReadResult | Promise<ResourceReadResult>;
  /** Completions for the template's variables (`completion/complete`): the values that start with `value`. */
  complete?: Record<string, (value: string) => string[] | Promise<string[]>>;
}

export const RESOURCE_BRAND: unique symbol = Symbol.for("lllm.resource") as never;

/** A resource definition, branded so that one loaded through another copy of lllm is recognised. */
export type ResourceDefinition = (ResourceSpec & { readonly kind: "resource" }) | (ResourceTemplateSpec & { readonly kind: "template" });

/**
 * A resource of a package, served by `lllm mcp serve` (`resources/list`, `resources/read`): a file of the
 * package's `resources/` folder exports it.
 *
 * ```ts
 * export default resource({ uri: "docs://units", name: "units", mimeType: "text/plain", read: () => "Celsius and Fahrenheit." });
 * ```
 */
export function resource(spec: ResourceSpec): ResourceDefinition {
  check(spec, "resource", "uri");
  return Object.freeze({ ...spec, kind: "resource" as const, [RESOURCE_BRAND]: true as const });
}

/** Resources named by a URI template (`resources/templates/list`): `read(uri, {id})` for `test://template/{id}/data`. */
export function resourceTemplate(spec: ResourceTemplateSpec): ResourceDefinition {
  check(spec, "resourceTemplate", "uriTemplate");
  if (spec.complete !== undefined && (typeof spec.complete !== "object" || spec.complete === null || Object.values(spec.complete).some((entry) => typeof entry !== "function"))) {
    throw new ConfigError("resource_invalid", `resourceTemplate(${JSON.stringify(spec.name)}): \`complete\` must map variable names to functions (value) => string[]`);
  }
  return Object.freeze({ ...spec, kind: "template" as const, [RESOURCE_BRAND]: true as const });
}

/** A resource definition from a module export, also one made by another copy of lllm. */
export function toResourceDefinition(value: unknown): ResourceDefinition | undefined {
  if (typeof value !== "object" || value === null || !(RESOURCE_BRAND in value)) return undefined;
  return value as unknown as ResourceDefinition;
}

function check(spec: unknown, what: string, uriKey: "uri" | "uriTemplate"): void {
  const record = (typeof spec === "object" && spec !== null ? spec : {}) as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof record.name !== "string" || record.name === "") problems.push("`name` must be a non-empty string");
  if (typeof record[uriKey] !== "string" || !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(record[uriKey] as string)) problems.push(`\`${uriKey}\` must be an absolute URI (scheme:…), e.g. "docs://guide"`);
  if (typeof record.read !== "function") problems.push("`read` must be a function");
  for (const key of ["title", "description", "mimeType"]) {
    if (record[key] !== undefined && typeof record[key] !== "string") problems.push(`\`${key}\` must be a string`);
  }
  if (problems.length > 0) throw new ConfigError("resource_invalid", `${what}(${JSON.stringify(record.name ?? "?")}): ${problems.join("; ")}`);
}
