import { sortProblems } from "../config/sortProblems.js";
import { ConfigError, type ConfigProblem, type SourceLocation } from "../errors.js";
import { placeholdersOf, templateShape } from "./endpointTemplate.js";
import { toParamType } from "./paramType.js";
import type { CutoffMode, EndpointDefinition, ParamDefinition, ProxyDefinition, ProxySource } from "./ProxyDefinition.js";
import type { EndpointSpec, ParamSpec, ProxySpec } from "./ProxySpec.js";

/** A path into the spec as written in camelCase (`["endpoints", 0, "urlPath"]`), turned into a file location. */
export type Locate = (path: ReadonlyArray<string | number>) => SourceLocation;

export interface DefinitionOptions {
  source?: ProxySource;
  locate: Locate;
  /** How keys are named in messages (`base_url` in YAML, `baseUrl` in TypeScript). */
  keyName?: (key: string) => string;
}

/**
 * Turn a structurally valid spec into a definition, checking what a schema cannot: every `{placeholder}` is a
 * declared param, no two endpoints answer the same path, a key name comes with its variable, and every endpoint has
 * something to answer it. All problems are thrown at once as one ConfigError (`proxy_invalid`).
 */
export function definitionFromSpec(spec: ProxySpec, options: DefinitionOptions): ProxyDefinition {
  const problems: ConfigProblem[] = [];
  const keyName = options.keyName ?? ((key: string) => key);
  const at = (path: ReadonlyArray<string | number>, message: string, hint?: string): void => {
    problems.push({ message, location: options.locate(path), ...(hint ? { hint } : {}) });
  };
  if ((spec.apiKeyName === undefined) !== (spec.apiKeyEnv === undefined)) {
    const [given, missing] = spec.apiKeyName === undefined ? ["apiKeyEnv", "apiKeyName"] : ["apiKeyName", "apiKeyEnv"];
    at([given], `\`${keyName(given)}\` needs \`${keyName(missing)}\` too`, `\`${keyName("apiKeyName")}\` says how the key is sent (a query parameter, or \`*Header-Name\`), \`${keyName("apiKeyEnv")}\` which environment variable holds it.`);
  }
  const shapes = new Map<string, number>();
  const endpoints = spec.endpoints.map((endpoint, index) => {
    const where = ["endpoints", index];
    const shape = templateShape(endpoint.endpoint);
    const first = shapes.get(shape);
    if (first !== undefined) {
      at([...where, "endpoint"], `endpoints[${first}] and endpoints[${index}] both answer \`${endpoint.endpoint}\``, "CALL_API picks an endpoint by its path alone: give each endpoint its own path (the URL can stay the same with `" + keyName("urlPath") + "`).");
    } else shapes.set(shape, index);
    if (spec.baseUrl === undefined && endpoint.handle === undefined) {
      at(where, `endpoint \`${endpoint.endpoint}\` has nothing to answer it: the proxy has no \`${keyName("baseUrl")}\``, "Give the proxy a base URL to call, or write it in TypeScript with proxy({...}) and a handle(params) that computes the answer.");
    }
    return toEndpoint(endpoint, [...where], at, keyName);
  });
  if (problems.length > 0) throw ConfigError.fromProblems("proxy_invalid", sortProblems(problems));
  return {
    path: spec.path,
    name: spec.name,
    description: spec.description,
    ...(spec.baseUrl !== undefined ? { baseUrl: spec.baseUrl } : {}),
    ...(spec.apiKeyName !== undefined ? { apiKeyName: spec.apiKeyName } : {}),
    ...(spec.apiKeyEnv !== undefined ? { apiKeyEnv: spec.apiKeyEnv } : {}),
    headers: { ...spec.headers },
    defaults: { ...spec.defaults },
    endpoints,
    ...(spec.callApi ? { callApi: spec.callApi } : {}),
    ...(options.source ? { source: options.source } : {}),
  };
}

type At = (path: ReadonlyArray<string | number>, message: string, hint?: string) => void;

function toEndpoint(spec: EndpointSpec, where: Array<string | number>, at: At, keyName: (key: string) => string): EndpointDefinition {
  const params: ParamDefinition[] = [];
  for (const [written, value] of Object.entries(spec.params ?? {})) {
    const param = toParam(written, value);
    if (!param) {
      at([...where, "params", written], `param \`${written}\` must be [type, example] or {type, example, cutoff}`, 'e.g. "city*": [string, London] (the * marks a required parameter)');
      continue;
    }
    if (param.name === "") {
      at([...where, "params", written], "a param needs a name before its `*`");
      continue;
    }
    if (params.some((other) => other.name === param.name)) {
      at([...where, "params", written], `param \`${param.name}\` is declared twice in endpoint \`${spec.endpoint}\``);
      continue;
    }
    params.push(param);
  }
  const declared = new Set(params.map((param) => param.name));
  for (const [field, template] of [["endpoint", spec.endpoint], ["urlPath", spec.urlPath]] as const) {
    if (template === undefined) continue;
    for (const name of placeholdersOf(template)) {
      if (!declared.has(name)) {
        at([...where, field], `placeholder \`{${name}}\` of \`${keyName(field)}\` \`${template}\` is not among the endpoint's params`, `Declare it so the documentation shows it, e.g. "${name}*": [string, example].`);
      }
    }
  }
  return {
    category: spec.category,
    endpoint: spec.endpoint,
    method: spec.method ?? "GET",
    description: spec.description,
    params,
    ...(spec.response !== undefined ? { response: spec.response } : {}),
    defaults: { ...spec.defaults },
    ...(spec.urlPath !== undefined ? { urlPath: spec.urlPath } : {}),
    ...(spec.cutoffField !== undefined ? { cutoffField: spec.cutoffField } : {}),
    ...(spec.handle ? { handle: spec.handle } : {}),
  };
}

function toParam(written: string, value: ParamSpec): ParamDefinition | undefined {
  const required = written.endsWith("*");
  const name = required ? written.slice(0, -1) : written;
  if (Array.isArray(value)) {
    const type = toParamType(value[0]);
    if (!type) return undefined;
    return { name, required, type, ...(value.length > 1 ? { example: value[1] } : {}) };
  }
  const record = value as { type?: unknown; example?: unknown; cutoff?: CutoffMode };
  const type = toParamType(record.type);
  if (!type) return undefined;
  return { name, required, type, ...("example" in record ? { example: record.example } : {}), ...(record.cutoff ? { cutoff: record.cutoff } : {}) };
}
