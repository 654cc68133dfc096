import type { AnySchemaObject } from "ajv";

/** Dollars per million tokens: a price of the `prices:` table. */
const PRICE = { type: "number", minimum: 0 };

/** Descriptions are for editors (`lllm schema settings`); the messages of a wrong file do not use them. */
const SETTINGS_SCHEMA: AnySchemaObject = {
  title: "lllm project settings",
  description: "Project settings: `.lllmrc`, `.lllmrc.{json,yaml,yml}`, `lllm.config.{json,yaml,js,mjs}` or the `lllm` key of package.json, found walking up from the current folder.",
  type: "object",
  additionalProperties: false,
  properties: {
    model: { type: "string", minLength: 1, description: "The model of agents that name none (`--model` still wins), e.g. gpt-4o-mini." },
    packages: { type: "array", items: { type: "string", minLength: 1 }, description: "Packages to load: folders relative to this file, or shared packages (npm:…, git+…, oci://…, a tarball) installed with `lllm add` / `lllm install`." },
    home: { type: "string", minLength: 1, description: "lllm's folder (run log, caches), relative to this file; default $LLLM_HOME, else ~/.lllm." },
    log: { type: "boolean", description: "false: runs are not recorded in the run log." },
    reply_size: {
      type: ["string", "number"],
      pattern: "^\\s*\\d+(\\.\\d+)?\\s*[kKmMgG]?[iI]?[bB]?\\s*$",
      exclusiveMinimum: 0,
      description: "The largest model reply lllm reads (decoded), a size such as `64M` or `1G`; a bare number is megabytes. Default 64M.",
    },
    prices: {
      type: "object",
      description: "Model prices in dollars per million tokens, over the table shipped with lllm (`lllm models`).",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        required: ["input", "output"],
        properties: {
          input: { ...PRICE, description: "A prompt token." },
          output: { ...PRICE, description: "A completion token." },
          cached_input: { ...PRICE, description: "A prompt token read from the provider's cache; default: input." },
          cache_write: { ...PRICE, description: "A prompt token written to the provider's cache (Anthropic); default: 1.25 x input." },
          batch_input: { ...PRICE, description: "An input token through the provider's batch API (`lllm batch --provider-batch`); default: half of input." },
          batch_output: { ...PRICE, description: "An output token through the provider's batch API; default: half of output." },
        },
      },
    },
  },
};

/** The JSON Schema of project settings (`.lllmrc`, `package.json#lllm`, …); the same object on every call. */
export function settingsSchema(): AnySchemaObject {
  return SETTINGS_SCHEMA;
}
