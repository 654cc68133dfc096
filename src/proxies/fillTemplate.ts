import { placeholderName, splitPath } from "./endpointTemplate.js";
import { ProxyCallError } from "./proxyError.js";

/**
 * Fill a URL path template: each `{name}` becomes its value URL-encoded as ONE path segment (`BRK/A` ->
 * `BRK%2FA`). A missing or empty value, `.` or `..` is refused before anything is sent, so a value can never
 * climb out of the endpoint or name another one. `label` names the call in messages (`fmp/profile/{symbol}`).
 */
export function fillTemplate(template: string, values: Record<string, unknown>, label: string): string {
  return splitPath(template)
    .map((segment) => {
      const name = placeholderName(segment);
      if (name === undefined) return segment;
      const value = values[name];
      if (value === undefined || value === null || value === "") {
        throw new ProxyCallError("proxy_path_value", `\`{${name}}\` of ${label} needs a value: write it in the path or pass it in params, e.g. {"${name}": "..."}`);
      }
      if (typeof value === "object") {
        throw new ProxyCallError("proxy_path_value", `\`{${name}}\` of ${label} must be a string or a number, not ${Array.isArray(value) ? "a list" : "a dict"}`);
      }
      const text = String(value);
      if (text === "." || text === "..") {
        throw new ProxyCallError("proxy_path_value", `\`{${name}}\` of ${label} cannot be \`${text}\`: a path value names one item`);
      }
      return encodeURIComponent(text);
    })
    .join("/");
}
