/**
 * The environment variable that overrides a proxy's base URL: `LLLM_PROXY_<PATH>_BASE_URL`, the path upper-cased
 * with other characters as `_` (`weather_api` -> `LLLM_PROXY_WEATHER_API_BASE_URL`). One convention for every proxy,
 * so a mirror, a recording server or a test server can stand in for an API without editing its definition.
 */
export function baseUrlVariable(proxyPath: string): string {
  return `LLLM_PROXY_${proxyPath.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_BASE_URL`;
}
