import type { AnySchemaObject } from "ajv";

const SETTINGS_SCHEMA: AnySchemaObject = {
  type: "object",
  additionalProperties: false,
  properties: {
    model: { type: "string", minLength: 1 },
    packages: { type: "array", items: { type: "string", minLength: 1 } },
    home: { type: "string", minLength: 1 },
    log: { type: "boolean" },
    prices: {
      type: "object",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        required: ["input", "output"],
        properties: { input: { type: "number", minimum: 0 }, output: { type: "number", minimum: 0 }, cached_input: { type: "number", minimum: 0 }, cache_write: { type: "number", minimum: 0 } },
      },
    },
  },
};

/** The JSON Schema of project settings (`.lllmrc`, `package.json#lllm`, …); the same object on every call. */
export function settingsSchema(): AnySchemaObject {
  return SETTINGS_SCHEMA;
}
