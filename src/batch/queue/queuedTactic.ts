import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../../errors.js";
import type { FileEntry, Registry } from "../../registry/index.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import type { QueuedTactic } from "./queueConnection.js";
import { contentDigest, packageNames } from "./queueDigest.js";
import { unsendableParts } from "./unsendableParts.js";
import { realOrResolved } from "../../util/realPath.js";

/**
 * How a queued batch names its tactic so that a worker on another machine, in another folder, finds the same one
 * among its own packages (a worker loads code only from those):
 * - a tactic file inside a loaded package (its `tactics/` folder): by ref, with the digest of the file's content;
 * - any other tactic file: as data, its resolved configuration (`base` chain merged), naming its packages by name.
 *   Such a tactic may not set what a worker takes only from its own packages (`unsendableParts`): that is refused
 *   here, at submission, with the fix.
 * Either way `--model scripted:FILE` is refused here: a worker would read a file of its own by that name.
 */
export function queuedTactic(prepared: PreparedTactic, model: string | null): QueuedTactic {
  // Whatever names the tactic: a worker would read a file of its own by that name (and every worker refuses it).
  if (model?.startsWith("scripted:")) {
    throw new ConfigError("queue_tactic_unsendable", `the workers cannot run this batch as it is: \`--model ${model}\` names a file of this machine, and a worker takes no file from a batch`, {
      location: { file: "--model" },
      hint: "Run a scripted model without --queue; with --queue, name a model the workers call with their own keys (e.g. --model gpt-4o-mini).",
    });
  }
  const file = prepared.tactic.file;
  const entry = tacticEntryOf(prepared.registry, file);
  if (entry) return { kind: "ref", ref: entry.ref, contentDigest: contentDigest(readFileSync(file)) };
  const { packages: _folders, ...data } = prepared.tactic.config;
  const parts = unsendableParts(data, model);
  if (parts.length > 0) {
    throw new ConfigError("queue_tactic_unsendable", `the workers cannot run this tactic as it is: it is not in a package, so it would be sent to them as data, and it sets what a worker takes only from its own packages: ${parts.join("; ")}`, {
      location: { file },
      hint: "Move the tactic into the tactics/ folder of a package (list that package in its `packages:`), give the workers a copy of the package, and start them with it: lllm worker --queue URL -p DIR",
    });
  }
  return { kind: "data", file: path.basename(file), data, packageNames: packageNames(prepared.registry, prepared.tactic.packages) };
}

/** The `tactics/` entry of a loaded package that is this file, if any. */
function tacticEntryOf(registry: Registry, file: string): FileEntry | undefined {
  const real = realOrResolved(file);
  for (const pkg of registry.list()) {
    for (const entry of pkg.entries("tactics").values()) {
      if (realOrResolved(entry.file) === real) return entry;
    }
  }
  return undefined;
}
