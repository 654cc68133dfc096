import path from "node:path";
import { loadProjectSettings } from "../config/index.js";
import { Registry } from "../registry/index.js";

/** The registry for commands that work on packages without a tactic: `--package` folders, settings, discovery. */
export async function loadRegistry(packages: string[] | undefined): Promise<Registry> {
  const cwd = process.cwd();
  const { settings, file } = await loadProjectSettings(cwd);
  return Registry.load({
    packages: [
      ...(packages ?? []).map((dir) => ({ dir: path.resolve(cwd, dir), location: { file: "--package" } })),
      ...(settings.packages ?? []).map((dir) => ({ dir, ...(file ? { location: { file } } : {}) })),
    ],
    cwd,
  });
}
