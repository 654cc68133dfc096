import { ConfigError, type ConfigProblem } from "../errors.js";
import type { ProxyDefinition } from "./ProxyDefinition.js";

/**
 * Definitions by their `path`. Two with one path are an error naming both files, because CALL_API could reach only
 * one of them; a built-in is the exception: a package's proxy with its path replaces it, like a later PATH entry.
 */
export function indexByPath(definitions: readonly ProxyDefinition[]): Map<string, ProxyDefinition> {
  const byPath = new Map<string, ProxyDefinition>();
  const problems: ConfigProblem[] = [];
  for (const definition of definitions) {
    const existing = byPath.get(definition.path);
    if (existing && existing.source?.kind !== "builtin") {
      problems.push({
        message: `two proxies have the path \`${definition.path}\`: ${describeSource(existing)} and ${describeSource(definition)}`,
        ...(definition.source ? { location: { file: definition.source.file } } : {}),
        hint: "The path is the first segment of every CALL_API path, so it must be unique: change `path` in one of them.",
      });
      continue;
    }
    byPath.set(definition.path, definition);
  }
  if (problems.length > 0) throw ConfigError.fromProblems("proxy_duplicate", problems);
  return byPath;
}

function describeSource(definition: ProxyDefinition): string {
  return definition.source ? definition.source.file : `a proxy made in code (${definition.name})`;
}
