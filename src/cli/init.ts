import path from "node:path";
import { fileURLToPath } from "node:url";
import { scaffoldPackage } from "../init/scaffoldPackage.js";
import { shellArgument } from "../util/shellArgument.js";
import { writeErr, writeOut } from "./output.js";

export interface InitCommandOptions {
  template?: string;
  force?: boolean;
}

/** `lllm init [DIR]`: a new package that validates, runs offline and passes its test at once. */
export function initCommand(dir: string | undefined, options: InitCommandOptions): void {
  const target = dir ?? ".";
  // dist/cli/init.js (or the bundle's dist/bundle/cli.js): the package root is two folders up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const result = scaffoldPackage({ dir: target, ...(options.template ? { template: options.template } : {}), ...(options.force ? { force: true } : {}), lllmRoot: root });
  writeOut(result.files.sort().join("\n"));
  const shown = path.relative(process.cwd(), path.resolve(target)) || ".";
  // The "Next:" line is pasted into a shell: a folder with a space or a quote must reach `cd` as one word.
  const cd = shown === "." ? "" : `cd ${shellArgument(shown)} && `;
  writeErr(`lllm: created package \`${result.name}\` (template ${result.template}) in ${shown}. Next: ${cd}cat README.md`);
}
