import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { didYouMean } from "../util/closest.js";
import { loadRegistry } from "./loadRegistry.js";

/** A tactic argument: a file path, or `pkg.tactics:name` found in the loaded packages. */
export async function resolveTacticTarget(target: string, packages: string[] | undefined): Promise<string> {
  if (existsSync(target)) return target;
  if (!looksLikeQualifiedRef(target)) {
    missingFile(target);
    return target;
  }
  // Quiet: the command loads these packages again with the tactic's and reports broken files then, once.
  const registry = await loadRegistry(packages, { quiet: true });
  return registry.resolveEntry("tactics", target).file;
}

/** A file that is not there, with a near name beside it (`wether.yaml`: `weather.yaml`), is refused with that name. */
function missingFile(target: string): void {
  const file = path.resolve(target);
  let siblings: string[];
  try {
    siblings = readdirSync(path.dirname(file)).filter((name) => /\.(ya?ml|json|[cm]?[jt]s)$/.test(name));
  } catch {
    return; // no such folder: the loader says the file is not there
  }
  const guess = didYouMean(path.basename(file), siblings);
  if (guess) throw new ConfigError("config_not_found", `tactic file not found: ${displayPath(file)}`, { hint: guess });
}
