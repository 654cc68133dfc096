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
      },
      {
        type: "object",
        additionalProperties: false,
        required: ["type"],
        properties: { type: { enum: [...PARAM_TYPE_NAMES] }, example: {}, cutoff: { enum: ["end", "clamp", "range"] } },
      },
    ],
  };
  const endpoint = {
    type: "object",
    additionalProperties: false,
    required: ["category", "endpoint", "description"],
    properties: {
      category: { type: "string" },
      endpoint: {
        type: "string",
        pattern: TEMPLATE,
        patternErrorMessage: "must be path segments separated by `/`, each plain text (letters, digits, `_`, `-`, `.`) or a whole `{placeholder}`, e.g. `current/{city}`",
      },
      method: { enum: ["GET", "POST"] },
      description: { type: "string" },
      params: { type: "object", additionalProperties: param },
      response: {},
      defaults: { type: "object" },
      [key("url_path")]: {
        type: "string",
        pattern: `^(?:${SEGMENT}(?:/${SEGMENT})*)?$`,
        patternErrorMessage: "must be empty or path segments like an endpoint, e.g. `series/observations`",
      },
      [key("cutoff_field")]: { type: "string", minLength: 1 },
      ...(style === "code" ? { handle: {} } : {}),
    },
  };
  return {
    ...(style === "yaml" ? { $id: "https://lllm.dev/schemas/proxy.schema.json" } : {}),
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "lllm proxy",
    type: "object",
    additionalProperties: false,
    required: ["path", "name", "description", "endpoints"],
    properties: {
      path: {
        type: "string",
        pattern: "^[A-Za-z0-9_][A-Za-z0-9_-]*$",
        patternErrorMessage: "must be letters, digits, `_` and `-` (it is the first segment of every CALL_API path)",
      },
      name: { type: "string", minLength: 1 },
      description: { type: "string" },
      [key("base_url")]: { type: "string", pattern: "^https?://", patternErrorMessage: "must be an http:// or https:// URL" },
      [key("api_key_name")]: { type: "string", pattern: "^\\*?[A-Za-z0-9_-]+$", patternErrorMessage: "must be a query parameter name, or `*` and a header name (e.g. `*x-api-key`)" },
      [key("api_key_env")]: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$", patternErrorMessage: "must be an environment variable name, e.g. `WEATHER_API_KEY`" },
      headers: { type: "object", additionalProperties: { type: "string" } },
      defaults: { type: "object" },
      endpoints: { type: "array", minItems: 1, items: endpoint },
      ...(style === "code" ? { callApi: {} } : {}),
    },
  };
}
