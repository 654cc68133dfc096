import { packagesOrHere } from "./packagesOrHere.js";
import { displayPath } from "../config/displayPath.js";
import { ConfigError } from "../errors.js";
import { ProxyCallError, ProxyManager, type ProxyDefinition } from "../proxies/index.js";
import { loadProxies } from "../registry/loadProxies.js";
import { didYouMean } from "../util/closest.js";
import { loadRegistry } from "./loadRegistry.js";
import { parseJsonObjectFlag } from "./parseJsonObjectFlag.js";
import { SCHEMA_VERSION, writeOut } from "./output.js";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";

interface ProxyOptions {
  package?: string[];
  json?: boolean;
}

interface ProxyCallOptions extends ProxyOptions {
  /** The call's params as a JSON object. */
  params?: string;
  noCache?: boolean;
  /** commander's spelling of `--no-cache`. */
  cache?: boolean;
}

/** `lllm proxy list`: every proxy the loaded packages and the built-ins offer, with the file it comes from. */
export async function proxyListCommand(options: ProxyOptions): Promise<void> {
  const definitions = (await definitionsFor(options)).sort((a, b) => a.path.localeCompare(b.path));
  if (options.json) {
    const proxies = definitions.map((definition) => ({
      path: definition.path,
      name: definition.name,
      endpoints: definition.endpoints.length,
      source: sourceOf(definition),
      ...(definition.source?.packageName ? { package: definition.source.packageName } : {}),
      ...(definition.apiKeyEnv ? { api_key_env: definition.apiKeyEnv } : {}),
    }));
    writeOut(escapeJsonControlCharacters(JSON.stringify({ schema_version: SCHEMA_VERSION, proxies }, null, 2)));
    return;
  }
  // Proxies' names are a package's text: no terminal escape of theirs reaches the terminal.
  const rows = definitions.map((definition) => [definition.path, definition.name, `${definition.endpoints.length} endpoint${definition.endpoints.length === 1 ? "" : "s"}`, sourceOf(definition)].map((cell) => escapeControlCharacters(cell, { all: true })));
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) writeOut(row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join("  "));
}

/** `lllm proxy docs [name]`: the documentation the agent reads through `query_api_doc` (all proxies without a name). */
export async function proxyDocsCommand(name: string | undefined, options: ProxyOptions): Promise<void> {
  const definitions = await definitionsFor(options);
  if (name !== undefined) checkName(name, definitions);
  if (options.json) {
    const chosen = name === undefined ? definitions : definitions.filter((definition) => definition.path === name);
    writeOut(escapeJsonControlCharacters(JSON.stringify({ schema_version: SCHEMA_VERSION, proxies: chosen.map(describe) }, null, 2)));
    return;
  }
  const manager = new ProxyManager({ proxies: definitions, useCache: false });
  writeOut(escapeControlCharacters(manager.retrieveApiDocs(name)));
}

/** `lllm proxy call <path> --params '{…}'`: call an endpoint as CALL_API would and print the result. */
export async function proxyCallCommand(callPath: string, options: ProxyCallOptions): Promise<void> {
  const params = options.params === undefined ? {} : parseJsonObjectFlag(options.params, { flag: "--params", code: "usage_params", example: '{"city": "Tokyo", "days": 2}' });
  const definitions = await definitionsFor(options);
  const name = callPath.replace(/^\/+/, "").split("/")[0] ?? "";
  checkName(name, definitions);
  const manager = new ProxyManager({ proxies: definitions, useCache: !(options.noCache === true || options.cache === false) });
  let result: unknown;
  try {
    result = await manager.call(callPath, params);
  } catch (error) {
    throw asUsageError(error);
  }
  // stdout is data: JSON, except that a text answer prints as text. --json wraps either in one object, as
  // `tools call --json` does, so a pipeline reads `{schema_version, result}` or `{schema_version, error}`.
  if (options.json) writeOut(escapeJsonControlCharacters(JSON.stringify({ schema_version: SCHEMA_VERSION, result: result ?? null }, null, 2)));
  else writeOut(typeof result === "string" ? escapeControlCharacters(result) : escapeJsonControlCharacters(JSON.stringify(result ?? null, null, 2)));
}

async function definitionsFor(options: ProxyOptions): Promise<ProxyDefinition[]> {
  const registry = await loadRegistry(packagesOrHere(options.package));
  return loadProxies(registry);
}

/** Codes that mean the command line (or the environment) is wrong, not the API: exit 2 with the user's fix. */
const USAGE_CODES = new Set(["proxy_key_missing", "proxy_param_missing", "proxy_endpoint_unknown", "proxy_unknown", "proxy_path_value", "proxy_param_invalid"]);

function asUsageError(error: unknown): unknown {
  if (!(error instanceof ProxyCallError) || !USAGE_CODES.has(error.code)) return error;
  if (error.code === "proxy_key_missing") {
    const variable = /environment variable (\S+) is not set/.exec(error.message)?.[1];
    return new ConfigError(error.code, error.message.replace(/: the user must set .*$/, ""), { ...(variable ? { hint: `Set it first: export ${variable}=…` } : {}), cause: error });
  }
  return new ConfigError(error.code, error.message, { hint: "Check the path and --params against `lllm proxy docs <name>`.", cause: error });
}

/** A name typed on the command line is the user's to fix (exit 2), unlike a model's call. */
function checkName(name: string, definitions: readonly ProxyDefinition[]): void {
  const paths = definitions.map((definition) => definition.path);
  if (paths.includes(name)) return;
  const near = didYouMean(name, paths);
  throw new ConfigError("proxy_not_found", `no proxy named \`${name}\``, { hint: `${near ? `${near} ` : ""}Available proxies: ${paths.join(", ")}. Add a package with --package DIR.` });
}

function sourceOf(definition: ProxyDefinition): string {
  if (!definition.source) return "(code)";
  if (definition.source.kind === "builtin") return "(built-in)";
  return displayPath(definition.source.file);
}

/** A definition as data: what the docs show plus the example responses, without functions. */
function describe(definition: ProxyDefinition): Record<string, unknown> {
  return {
    path: definition.path,
    name: definition.name,
    description: definition.description,
    ...(definition.baseUrl ? { base_url: definition.baseUrl } : {}),
    ...(definition.apiKeyEnv ? { api_key_env: definition.apiKeyEnv } : {}),
    endpoints: definition.endpoints.map((endpoint) => ({
      category: endpoint.category,
      endpoint: endpoint.endpoint,
      method: endpoint.method,
      description: endpoint.description,
      params: endpoint.params.map((param) => ({ name: param.name, required: param.required, type: param.type, ...(param.example !== undefined ? { example: param.example } : {}), ...(param.cutoff ? { cutoff: param.cutoff } : {}) })),
      ...(endpoint.response !== undefined ? { response: endpoint.response } : {}),
    })),
  };
}
