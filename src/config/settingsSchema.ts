import type { AnySchemaObject } from "ajv";

const SETTINGS_SCHEMA: AnySchemaObject = {
  type: "object",
  additionalProperties: false,
  properties: {
    model: { type: "string", minLength: 1 },
    packages: { type: "array", items: { type: "string", minLength: 1 } },
    home: { type: "string", minLength: 1 },
  },
};

/** The JSON Schema of project settings (`.lllmrc`, `package.json#lllm`, …); the same object on every call. */
export function settingsSchema(): AnySchemaObject {
  return SETTINGS_SCHEMA;
}
