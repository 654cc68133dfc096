import { ConfigError } from "../../errors.js";
import type { Registry } from "../../registry/Registry.js";
import type { FunctionTool } from "../../tools/FunctionTool.js";

/** A package's tools ready to run, and the declarations that have no implementation among the loaded packages. */
export interface PackageTools {
  tools: FunctionTool[];
  /** Refs of declarations that could not be bound; they cannot be served. */
  unbound: string[];
}

/**
 * Every tool of a package, bound as a tactic would bind it: a declaration takes the implementation of the same
 * name from the package itself, a runtime registration, or another loaded package (a dependency).
 */
export function packageTools(registry: Registry, packageName: string): PackageTools {
  const pkg = registry.packages.get(packageName);
  if (!pkg) {
    const names = [...registry.packages.keys()];
    throw new ConfigError("package_not_found", `no package named \`${packageName}\``, { hint: names.length > 0 ? `Loaded packages: ${names.join(", ")}.` : "No packages are loaded." });
  }
  const tools: FunctionTool[] = [];
  const unbound: string[] = [];
  for (const entry of pkg.tools()) {
    const { tool } = registry.resolveTool(entry.ref);
    if (tool.isDeclaration) unbound.push(entry.ref);
    else tools.push(tool);
  }
  return { tools, unbound };
}
