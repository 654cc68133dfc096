import type { AnySchemaObject } from "ajv";
import { PARAM_TYPE_NAMES } from "./paramType.js";

/** YAML files write keys in snake_case (LLLM's spelling); `proxy({...})` in TypeScript writes them in camelCase. */
export type DefinitionStyle = "yaml" | "code";

/** The keys spelt differently in the two styles, YAML first. */
export const CAMEL_KEYS: Record<string, string> = {
  base_url: "baseUrl",
  api_key_name: "apiKeyName",
  api_key_env: "apiKeyEnv",
  url_path: "urlPath",
  cutoff_field: "cutoffField",
};

const SEGMENT = String.raw`(?:[A-Za-z0-9_.~-]+|\{[A-Za-z_][A-Za-z0-9_]*\})`;
const TEMPLATE = `^${SEGMENT}(?:/${SEGMENT})*$`;

const cache = new Map<DefinitionStyle, AnySchemaObject>();

/**
 * The JSON Schema of a proxy definition, in either spelling. It checks the structure (unknown keys, types, the
 * endpoint syntax); what a schema cannot say (placeholders declared as params, duplicate endpoints, a key name
 * without its variable) is checked by `definitionFromSpec`. The YAML form is what `schemas/proxy.schema.json`
 * would hold for editors.
 */
export function proxySchema(style: DefinitionStyle): AnySchemaObject {
  let schema = cache.get(style);
  if (!schema) {
    schema = buildSchema(style);
    cache.set(style, schema);
  }
  return schema;
}

function buildSchema(style: DefinitionStyle): AnySchemaObject {
  const key = (name: string): string => (style === "code" ? (CAMEL_KEYS[name] ?? name) : name);
  const param = {
    anyOf: [
      {
        type: "array",
        minItems: 1,
        maxItems: 2,
        items: [{ enum: [...PARAM_TYPE_NAMES] }],
        description: "`[type, example]`: a JSON Schema or Python type name, and an example value the documentation shows.",
      },
      {
        type: "object",
        additionalProperties: false,
        required: ["type"],
        properties: {
          type: { enum: [...PARAM_TYPE_NAMES], description: "A JSON Schema or Python type name." },
          example: { description: "An example value the documentation shows." },
          cutoff: {
            enum: ["end", "clamp", "range"],
            description: "How the date parameter follows the agent's `cutoff_date`: `end` defaults to it and is clamped at it, `clamp` is only clamped, `range` (a `START END` window) is moved to end by it.",
          },
        },
        description: "`{type, example, cutoff}`: the long form, for a date parameter that follows the cutoff date.",
      },
    ],
    description: "One parameter; a trailing `*` on its name marks it required (`\"city*\": [string, London]`).",
  };
  const endpoint = {
    type: "object",
    additionalProperties: false,
    required: ["category", "endpoint", "description"],
    properties: {
      category: { type: "string", description: "The group the documentation lists the endpoint under." },
      endpoint: {
        type: "string",
        pattern: TEMPLATE,
        patternErrorMessage: "must be path segments separated by `/`, each plain text (letters, digits, `_`, `-`, `.`) or a whole `{placeholder}`, e.g. `current/{city}`",
        description: "The path the agent calls after the proxy's path, e.g. `current/{city}`: `CALL_API(\"weather/current/Tokyo\", {})` fills `city`.",
      },
      method: { enum: ["GET", "POST"], default: "GET", description: "`GET` sends the parameters in the query; `POST` sends them as a JSON body." },
      description: { type: "string", description: "What the endpoint answers, for the agent's documentation." },
      params: { type: "object", additionalProperties: param, description: "The endpoint's parameters, by name." },
      response: { description: "An example response, shown in the documentation." },
      defaults: { type: "object", description: "Parameters set when the call leaves them out (over the proxy's own `defaults`)." },
      [key("url_path")]: {
        type: "string",
        pattern: `^(?:${SEGMENT}(?:/${SEGMENT})*)?$`,
        patternErrorMessage: "must be empty or path segments like an endpoint, e.g. `series/observations`",
        description: "The URL path under the base URL when it differs from `endpoint` (may be empty, or hold the same placeholders).",
      },
      [key("cutoff_field")]: { type: "string", minLength: 1, description: "With a cutoff date, items of a list response whose field holds a later date are dropped (e.g. `date`)." },
      ...(style === "code" ? { handle: {} } : {}),
    },
  };
  return {
    ...(style === "yaml" ? { $id: "https://lllm.dev/schemas/proxy.schema.json" } : {}),
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "lllm proxy",
    description: "A declarative data-API proxy (`proxies/*.yaml` in a package): the agent reads its documentation with `query_api_doc` and calls its endpoints with `CALL_API(path, params)`.",
    type: "object",
    additionalProperties: false,
    required: ["path", "name", "description", "endpoints"],
    properties: {
      path: {
        type: "string",
        pattern: "^[A-Za-z0-9_][A-Za-z0-9_-]*$",
        patternErrorMessage: "must be letters, digits, `_` and `-` (it is the first segment of every CALL_API path)",
        description: "The name the proxy is activated by (`activate_proxies`), and the first segment of every `CALL_API` path.",
      },
      name: { type: "string", minLength: 1, description: "The display name, the heading of the proxy's documentation." },
      description: { type: "string", description: "What the API provides, for the agent's documentation." },
      [key("base_url")]: {
        type: "string",
        pattern: "^https?://",
        patternErrorMessage: "must be an http:// or https:// URL",
        description: "The API's root; each call goes to it plus the endpoint's path. `LLLM_PROXY_<PATH>_BASE_URL` overrides it. Redirects are followed only within its origin.",
      },
      [key("api_key_name")]: {
        type: "string",
        pattern: "^\\*?[A-Za-z0-9_-]+$",
        patternErrorMessage: "must be a query parameter name, or `*` and a header name (e.g. `*x-api-key`)",
        description: "The query parameter that carries the key, or `*` and a header name to send it as a header (`*X-Api-Key`). Added on the host: sandboxed code never sees the key.",
      },
      [key("api_key_env")]: {
        type: "string",
        pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
        patternErrorMessage: "must be an environment variable name, e.g. `WEATHER_API_KEY`",
        description: "The environment variable holding the key (or a key stored under that name with `lllm keys set`); read only when the proxy is called.",
      },
      headers: { type: "object", additionalProperties: { type: "string" }, description: "HTTP headers sent with every call." },
      defaults: { type: "object", description: "Parameters every endpoint gets when the call leaves them out." },
      endpoints: { type: "array", minItems: 1, items: endpoint, description: "The endpoints the agent may call." },
      ...(style === "code" ? { callApi: {} } : {}),
    },
  };
}
