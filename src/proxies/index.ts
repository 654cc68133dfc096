export { proxy, PROXY_BRAND } from "./proxy.js";
export type { ProxySpec, EndpointSpec, ParamSpec } from "./ProxySpec.js";
export type {
  ProxyDefinition,
  EndpointDefinition,
  ParamDefinition,
  ParamType,
  CutoffMode,
  ProxyCallContext,
  ProxySource,
  ApiRequest,
  CallApiHook,
  EndpointHandler,
} from "./ProxyDefinition.js";
export { ProxyManager, DEFAULT_PROXY_TIMEOUT_MS, type ProxyManagerOptions } from "./ProxyManager.js";
export { ActiveProxy, type ActiveProxyOptions } from "./ActiveProxy.js";
export { ProxyCache, type CacheStats, type CacheKeyParts } from "./ProxyCache.js";
export { ProxyCallError } from "./proxyError.js";
export { formatApiDocs } from "./formatApiDocs.js";
export { readProxyFile, parseProxyText } from "./readProxyFile.js";
export { builtinProxies } from "./builtinProxies.js";
export { toProxyDefinition } from "./toProxyDefinition.js";
export { proxySchema, type DefinitionStyle } from "./proxySchema.js";
export { baseUrlVariable } from "./baseUrlVariable.js";
export { pythonTypeName } from "./paramType.js";
