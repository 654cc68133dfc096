import { pythonRepr } from "../util/pythonRepr.js";
import { pythonTypeName } from "./paramType.js";
import type { ParamDefinition, ProxyDefinition } from "./ProxyDefinition.js";

/** Examples longer than this are cut, as LLLM does, so one big example cannot swamp the documentation. */
const EXAMPLE_LIMIT = 60;

/**
 * One proxy's documentation as `query_api_doc` returns it (seed 000, Step 13), exactly:
 *
 * ```
 * ## Weather API (weather)
 * Current weather and forecasts for any city.
 * - **current/{city}** [GET] – Current temperature and conditions for a city.
 *     - `city*` (str) e.g. London
 * ```
 *
 * Types are shown by their Python names, because the agent calls the API from Python; strings are shown bare,
 * other examples as Python writes them (`True`, `['a', 'b']`). No example shows as `None`.
 */
export function formatApiDocs(definition: ProxyDefinition): string {
  const lines = [`## ${definition.name} (${definition.path})`];
  const description = definition.description.trim();
  if (description) lines.push(description);
  for (const endpoint of definition.endpoints) {
    lines.push(`- **${endpoint.endpoint}** [${endpoint.method}] – ${endpoint.description.trim()}`.trimEnd());
    for (const param of endpoint.params) lines.push(`    - \`${param.name}${param.required ? "*" : ""}\` (${pythonTypeName(param.type)}) e.g. ${formatExample(param)}`.trimEnd());
  }
  return lines.join("\n");
}

function formatExample(param: ParamDefinition): string {
  const example = param.example;
  if (typeof example === "string") return example;
  const text = pythonRepr(example);
  return typeof example === "object" && example !== null ? text.slice(0, EXAMPLE_LIMIT) : text;
}
