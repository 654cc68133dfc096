import { readFile } from "node:fs/promises";
import { displayPath } from "../config/displayPath.js";
import { SourceDocument } from "../config/SourceDocument.js";
import { validateAgainstSchema } from "../config/validateAgainstSchema.js";
import { ConfigError } from "../errors.js";
import { definitionFromSpec } from "./definitionFromSpec.js";
import type { ProxyDefinition, ProxySource } from "./ProxyDefinition.js";
import { CAMEL_KEYS } from "./proxySchema.js";
import type { ProxySpec } from "./ProxySpec.js";

const SNAKE_KEYS: Record<string, string> = Object.fromEntries(Object.entries(CAMEL_KEYS).map(([snake, camel]) => [camel, snake]));

/**
 * Read a declarative proxy (`proxies/*.yaml`): parse it with line numbers, check it against the proxy schema, then
 * check what a schema cannot. Every problem names `file:line:col` and, for a misspelt key, the closest valid one.
 */
export async function readProxyFile(file: string, source: Omit<ProxySource, "file"> = { kind: "yaml" }): Promise<ProxyDefinition> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError("proxy_not_found", `cannot read proxy file ${displayPath(file)}: ${(error as Error).message}`, { location: { file: displayPath(file) } });
  }
  return parseProxyText(text, file, source);
}

/** The same as `readProxyFile` for text already in hand (`file` names it in messages). */
export function parseProxyText(text: string, file: string, source: Omit<ProxySource, "file"> = { kind: "yaml" }): ProxyDefinition {
  // A built-in's data comes from the parse cache after the first run: the six of them took ~100 ms of yaml parsing
  // at each start of `lllm serve` or of a run with a code-action agent (their `api_key_env` kept them out).
  const document = SourceDocument.parse(text, displayPath(file), { shipped: source.kind === "builtin" });
  const problems = validateAgainstSchema(document.data, "proxyYaml", document);
  if (problems.length > 0) throw ConfigError.fromProblems("proxy_invalid", problems);
  return definitionFromSpec(toCamel(document.data), {
    source: { ...source, file },
    locate: (path) => document.locate(path.map((segment) => (typeof segment === "string" ? (SNAKE_KEYS[segment] ?? segment) : segment))),
    keyName: (key) => SNAKE_KEYS[key] ?? key,
  });
}

/** YAML's snake_case keys in the TypeScript spelling; only the keys of the format, never parameter names or values. */
function toCamel(data: Record<string, unknown>): ProxySpec {
  const rename = (record: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [CAMEL_KEYS[key] ?? key, value]));
  const spec = rename(data);
  spec.endpoints = (data.endpoints as Array<Record<string, unknown>>).map(rename);
  return spec as unknown as ProxySpec;
}
