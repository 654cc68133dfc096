import { validateAgainstSchema } from "../config/validateAgainstSchema.js";
import { ConfigError } from "../errors.js";
import { definitionFromSpec } from "./definitionFromSpec.js";
import type { ProxyDefinition } from "./ProxyDefinition.js";
import type { ProxySpec } from "./ProxySpec.js";

/** Marks a definition made by `proxy()`, recognised across copies of this module (a package file gets its own). */
export const PROXY_BRAND: unique symbol = Symbol.for("lllm.proxy") as never;

/**
 * A proxy written in TypeScript, the form of the seed's `@ProxyRegistrator` classes: `export default proxy({ path,
 * name, description, endpoints: [{ category, endpoint, description, params, response, handle }] })` in a package's
 * `proxies/*.ts`. Without `baseUrl` each endpoint's `handle(params, context)` computes the answer (Step 11); with a
 * `baseUrl`, `handle` returns the parameters to send (Step 12) and the proxy makes the request, and `callApi` may
 * replace that request (the seed's `_call_api` override). There is no base class to extend: a plain spec object is
 * the whole interface. Throws a `proxy_invalid` ConfigError listing every problem.
 */
export function proxy(spec: ProxySpec): ProxyDefinition {
  const where = `proxy(${typeof spec?.path === "string" ? `\`${spec.path}\`` : "…"})`;
  const locate = () => ({ file: where });
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    throw new ConfigError("proxy_invalid", `${where} needs a spec object`, { hint: 'Write proxy({ path: "weather", name: "Weather API", description: "…", endpoints: [...] }).' });
  }
  const problems = validateAgainstSchema(withoutFunctions(spec), "proxyCode", { file: where, locate, locateKey: locate }, { rootName: "the spec" });
  if (spec.callApi !== undefined && typeof spec.callApi !== "function") problems.push({ message: "callApi must be a function (request, context) => response", location: locate() });
  (Array.isArray(spec.endpoints) ? spec.endpoints : []).forEach((endpoint, index) => {
    if (endpoint && endpoint.handle !== undefined && typeof endpoint.handle !== "function") {
      problems.push({ message: `endpoints[${index}].handle must be a function (params, context) => result`, location: locate() });
    }
  });
  if (problems.length > 0) throw ConfigError.fromProblems("proxy_invalid", problems);
  const definition = definitionFromSpec(spec, { locate });
  Object.defineProperty(definition, PROXY_BRAND, { value: true, enumerable: false });
  return definition;
}

/** The spec without its functions, which JSON Schema cannot describe; they are checked by hand. */
function withoutFunctions(spec: ProxySpec): unknown {
  const { callApi: _callApi, ...rest } = spec;
  return {
    ...rest,
    ...(Array.isArray(spec.endpoints)
      ? {
          endpoints: spec.endpoints.map((endpoint) => {
            if (endpoint === null || typeof endpoint !== "object") return endpoint;
            const { handle: _handle, ...fields } = endpoint;
            return fields;
          }),
        }
      : {}),
  };
}
