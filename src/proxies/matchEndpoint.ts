import { placeholderName, splitPath } from "./endpointTemplate.js";
import type { EndpointDefinition } from "./ProxyDefinition.js";

/** The endpoint a call path names, and the placeholder values the path carried. */
export interface EndpointMatch {
  endpoint: EndpointDefinition;
  /** Values taken from the path (`current/Tokyo` -> `{ city: "Tokyo" }`), decoded. */
  pathParams: Record<string, string>;
}

/**
 * Find the endpoint whose template matches `subpath` (the call path after the proxy's name), segment by segment.
 * A placeholder matches any one segment; written as itself (`current/{city}`) it matches too and leaves the value to
 * the params. When several templates match, the one with more literal segments wins (`series/search` over
 * `series/{id}`), then the one defined first.
 */
export function matchEndpoint(endpoints: readonly EndpointDefinition[], subpath: string): EndpointMatch | undefined {
  const segments = splitPath(subpath);
  let best: { match: EndpointMatch; literals: number } | undefined;
  for (const endpoint of endpoints) {
    const template = splitPath(endpoint.endpoint);
    if (template.length !== segments.length) continue;
    const pathParams: Record<string, string> = {};
    let literals = 0;
    let matches = true;
    template.forEach((part, index) => {
      const segment = segments[index]!;
      const name = placeholderName(part);
      if (name === undefined) {
        if (part === segment) literals++;
        else matches = false;
      } else if (segment !== part) {
        pathParams[name] = decodeSegment(segment);
      }
    });
    if (matches && (!best || literals > best.literals)) best = { match: { endpoint, pathParams }, literals };
  }
  return best?.match;
}

/** `BRK%2FA` -> `BRK/A`, so a value is encoded exactly once when the URL is built; a stray `%` is kept as written. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
