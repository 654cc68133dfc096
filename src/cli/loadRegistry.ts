import { loadProjectSettings } from "../config/index.js";
import { formatProblem } from "../errors.js";
import { Registry } from "../registry/index.js";
import { warn } from "./output.js";
import { resolvePackageEntry } from "../config/packageSource.js";

export interface LoadRegistryOptions {
  /** No warnings for tool files that did not load. */
  quiet?: boolean;
  /**
   * `false`: run no code of the folder: neither a settings file that is code (`lllm.config.mjs`) nor the packages'
   * tool files (the registry then lists prompts, tactics and proxies, no tools). For shell completion.
   */
  runCode?: boolean;
}

/** The registry for commands that work on packages without a tactic: `--package` folders, settings, discovery. */
export async function loadRegistry(packages: string[] | undefined, options: LoadRegistryOptions = {}): Promise<Registry> {
  const cwd = process.cwd();
  const runCode = options.runCode !== false;
  const { settings, file } = await loadProjectSettings(cwd, { runCode });
  const registry = await Registry.load({
    packages: [
      ...(packages ?? []).map((dir) => ({ dir: resolvePackageEntry(dir, cwd), location: { file: "--package" } })),
      ...(settings.packages ?? []).map((dir) => ({ dir, ...(file ? { location: { file } } : {}) })),
    ],
    cwd,
    importTools: runCode,
  });
  if (!options.quiet) warnBrokenFiles(registry);
  return registry;
}

/** One warning per tool file that did not load: the package's other tools still work. */
export function warnBrokenFiles(registry: Registry): void {
  for (const problem of registry.brokenFiles()) warn(`${formatProblem(problem)}\n  (this file's tools are not available; the package's other tools are)`);
}
