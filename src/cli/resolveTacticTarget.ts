import { existsSync } from "node:fs";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { loadRegistry } from "./loadRegistry.js";

/** A tactic argument: a file path, or `pkg.tactics:name` found in the loaded packages. */
export async function resolveTacticTarget(target: string, packages: string[] | undefined): Promise<string> {
  if (existsSync(target) || !looksLikeQualifiedRef(target)) return target;
  const registry = await loadRegistry(packages);
  return registry.resolveEntry("tactics", target).file;
}
