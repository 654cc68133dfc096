import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { didYouMean } from "../util/closest.js";
import { loadRegistry } from "./loadRegistry.js";
import { packagesOrHere, packagesOrManifestHere } from "./packagesOrHere.js";
import type { FileEntry } from "../registry/Package.js";

/** A tactic argument: a file path, or `pkg.tactics:name` found in the loaded packages (or the folder's own). */
export async function resolveTacticTarget(target: string, packages: string[] | undefined): Promise<string> {
  // A ref is a ref even when a file of that name is in the working folder: one planted there (a shared folder, a
  // cloned repository) must not stand in for the package's tactic. The file is `./NAME`.
  if (!looksLikeQualifiedRef(target)) {
    if (existsSync(target)) return target;
    missingFile(target);
    await tacticNamedAlone(target, packages);
    return target;
  }
  // Quiet: the command loads these packages again with the tactic's and reports broken files then, once. Inside a
  // package's folder with no -p, that package, as `lllm tools list` there (the tactic then knows its own package);
  // only one with a manifest: a folder with a mere `tools/` would have its files run to find another package's tactic.
  const registry = await loadRegistry(packagesOrManifestHere(packages), { quiet: true });
  try {
    return registry.resolveEntry("tactics", target).file;
  } catch (error) {
    if (!(error instanceof ConfigError) || !existsSync(target)) throw error;
    throw new ConfigError(error.code, error.message, { ...(error.location ? { location: error.location } : {}), hint: `${error.hint ? `${error.hint}\n  ` : ""}A file of that name is in this folder: to run it, name it as a path (./${target}).` });
  }
}

/**
 * A bare name that is no file (`lllm run weather -p ./weather`) is most often a package's tactic named without its
 * package: refused with the ref to write, or the near one. Looked up without running any of the packages' code; a
 * project that does not load is left for the command to report.
 */
async function tacticNamedAlone(target: string, packages: string[] | undefined): Promise<void> {
  if (!/^[A-Za-z0-9_][\w.-]*$/.test(target) || /\.(ya?ml|json|[cm]?[jt]s)$/.test(target)) return;
  let entries: FileEntry[];
  try {
    const registry = await loadRegistry(packagesOrHere(packages), { quiet: true, runCode: false });
    entries = registry.list().flatMap((pkg) => [...pkg.tactics.values()]);
  } catch {
    return;
  }
  const same = entries.filter((entry) => entry.key === target).map((entry) => `\`${entry.ref}\``);
  const hint =
    same.length === 1 ? `a package's tactic is named with its package: ${same[0]}`
    : same.length > 1 ? `tactics of that name: ${same.join(", ")}`
    : didYouMean(target, entries.map((entry) => entry.ref)) || didYouMean(target, entries.map((entry) => entry.key)).replace(/`([^`]+)`/g, (_, key: string) => `\`${entries.find((entry) => entry.key === key)!.ref}\``);
  if (hint) throw new ConfigError("config_not_found", `tactic file not found: ${target}`, { hint });
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
