import { realpath } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors.js";
import type { ConfigProblem, SourceLocation } from "../errors.js";
import { deepMerge } from "./deepMerge.js";
import { displayPath } from "./displayPath.js";
import { isPackageRef } from "./isPackageRef.js";
import type { LoadedTactic } from "./LoadedTactic.js";
import { mergeAgents } from "./mergeAgents.js";
import { Provenance } from "./Provenance.js";
import { readSourceDocument } from "./readSourceDocument.js";
import { SourceDocument } from "./SourceDocument.js";
import { sortProblems } from "./sortProblems.js";
import type { TacticConfig } from "./TacticConfig.js";
import { validateTactic } from "./validateTactic.js";
import { resolvePackageEntry } from "./packageSource.js";
import { confinementProblem } from "./packageConfinement.js";

export interface LoadTacticOptions {
  /**
   * The file of a package ref used as `base` (e.g. `weather.tactics:common`), supplied by the package registry.
   * It may throw a `ConfigError` for an unknown ref; `from` is the `base:` line to point at. Without it, a ref base
   * is an error.
   */
  resolveRef?: (ref: string, from: SourceLocation) => string;
  /** Every agent's model (the CLI's `--model`). */
  modelOverride?: string;
  /** The model of agents that set none, in their entry or in `global` (the project settings' `model`). */
  defaultModel?: string;
  /** Directory a relative `file` is resolved against. Default: `process.cwd()`. */
  cwd?: string;
  /**
   * The text of `file` when it is not a YAML file on disk; `file` still names it in messages and anchors
   * relative paths.
   */
  text?: string;
  /** The data of `file` when it was never text (a tactic defined in code gives its config this way), used as is. */
  data?: Record<string, unknown>;
  /**
   * The folder a file of the chain must keep its `base:` and `packages:` paths in, or undefined: an installed
   * package's own folder for its tactics (see `confinementProblem`).
   */
  confine?: (file: string) => string | undefined;
}

/**
 * Read a tactic file (YAML or JSON), follow its `base` chain, validate each file on its own (so problems point at
 * the right file and line), deep-merge the chain (mappings merge; lists and values of the child replace), and merge
 * `global` into every agent. Throws a `ConfigError`: `config_not_found`, `config_parse`, `config_base_cycle`, or
 * `config_invalid` listing every problem of the chain at once.
 */
export async function loadTacticFile(file: string, options: LoadTacticOptions = {}): Promise<LoadedTactic> {
  const first = path.resolve(options.cwd ?? process.cwd(), file);
  const documents: SourceDocument[] = [];
  const files: string[] = [];
  const layers: Array<Record<string, unknown>> = [];
  const problems: ConfigProblem[] = [];
  const visited: string[] = [];

  let next: { file: string; from?: SourceLocation } | undefined = { file: first };
  while (next) {
    const document =
      next.file === first && options.data !== undefined
        ? SourceDocument.fromData(displayPath(first), options.data)
        : next.file === first && options.text !== undefined
        ? SourceDocument.parse(options.text, displayPath(first))
        : await readSourceDocument(next.file, {
            what: next.from ? "base file" : "tactic file",
            ...(next.from
              ? { referencedFrom: next.from, missingHint: "a `base` path is relative to the file that names it" }
              : { missingHint: "A tactic is a path, relative to the current folder, or a package's tactic by its ref (weather.tactics:weather); `lllm init` makes a package with one." }),
          });
    // Compare real paths so that a cycle through a symlink is still found.
    const identity = await realpath(next.file);
    if (visited.includes(identity)) {
      const chain = [...files, next.file].map((item) => displayPath(item)).join(" -> ");
      throw ConfigError.fromProblems("config_base_cycle", [
        { message: `\`base\` cycle: ${chain}`, ...(next.from ? { location: next.from } : {}), hint: "remove the `base` that points back" },
      ]);
    }
    visited.push(identity);
    documents.push(document);
    files.push(next.file);
    problems.push(...validateTactic(document));
    const layer = withAbsolutePackages(document.data, path.dirname(next.file));
    const folder = options.confine?.(next.file);
    if (folder !== undefined) confinePackages(layer, document, folder, problems);
    layers.push(layer);
    next = nextBase(document, next.file, options, problems, folder);
  }
  if (problems.length > 0) throw ConfigError.fromProblems("config_invalid", sortProblems(problems));

  const merged = layers.reduceRight<unknown>((base, layer) => deepMerge(base, layer), {}) as TacticConfig;
  delete merged.base;
  const config = { ...merged, tactic_type: merged.tactic_type ?? "agent", prompt: merged.prompt ?? "{input}" };
  const provenance = new Provenance(documents, config, options.modelOverride);
  const agents = mergeAgents(config, {
    locate: (at) => provenance.locate(at),
    file: documents[0]?.file ?? first,
    ...(options.modelOverride !== undefined ? { modelOverride: options.modelOverride } : {}),
    ...(options.defaultModel !== undefined ? { defaultModel: options.defaultModel } : {}),
  });
  return {
    file: first,
    files,
    config,
    agents,
    packages: config.packages ?? [],
    locate: (at) => provenance.locate(at),
    locateAgent: (index, at) => provenance.locateAgent(agents[index], index, at),
  };
}

/** The file `document`'s `base` names, or undefined; a ref that cannot be resolved becomes a problem. */
function nextBase(document: SourceDocument, file: string, options: LoadTacticOptions, problems: ConfigProblem[], folder: string | undefined): { file: string; from: SourceLocation } | undefined {
  const base = document.data.base;
  if (typeof base !== "string") return undefined;
  const from = document.locate(["base"]);
  if (!isPackageRef(base)) {
    const target = path.resolve(path.dirname(file), base);
    // Not even read: a file out of an installed package is no part of what was added.
    const outside = folder === undefined ? undefined : confinementProblem("base", target, folder, from);
    if (outside !== undefined) problems.push(outside);
    return outside === undefined ? { file: target, from } : undefined;
  }
  if (!options.resolveRef) {
    problems.push({
      message: `base \`${base}\` is a package ref, but no packages are available to resolve it here`,
      location: from,
      hint: "use a path relative to this file, e.g. `base: ./common.yaml`",
    });
    return undefined;
  }
  return { file: path.resolve(options.cwd ?? process.cwd(), options.resolveRef(base, from)), from };
}

/** Each of the layer's local `packages:` folders that lies outside `folder`, as a problem (see `confinementProblem`). */
function confinePackages(layer: Record<string, unknown>, document: SourceDocument, folder: string, problems: ConfigProblem[]): void {
  const packages = layer.packages;
  if (!Array.isArray(packages)) return;
  packages.forEach((entry: unknown, index) => {
    if (typeof entry !== "string") return;
    const outside = confinementProblem("package", entry, folder, document.locate(["packages", index]));
    if (outside !== undefined) problems.push(outside);
  });
}

/** The file's data with its `packages` made absolute against its own folder (a base's packages are its own). */
function withAbsolutePackages(data: Record<string, unknown>, folder: string): Record<string, unknown> {
  const packages = data.packages;
  if (!Array.isArray(packages)) return data;
  return { ...data, packages: packages.map((item: unknown) => (typeof item === "string" ? resolvePackageEntry(item, folder) : item)) };
}
