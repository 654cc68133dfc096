import { existsSync } from "node:fs";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { loadRegistry } from "./loadRegistry.js";

/** A tactic argument: a file path, or `pkg.tactics:name` found in the loaded packages. */
export async function resolveTacticTarget(target: string, packages: string[] | undefined): Promise<string> {
  if (existsSync(target) || !looksLikeQualifiedRef(target)) return target;
  // Quiet: the command loads these packages again with the tactic's and reports broken files then, once.
  const registry = await loadRegistry(packages, { quiet: true });
  return registry.resolveEntry("tactics", target).file;
}
