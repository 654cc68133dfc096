import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN } from "./paths.js";
import { tempDir, tempTree } from "./tempTree.js";

/**
 * A folder holding an `lllm` that runs this checkout's built CLI, to put first on PATH: the completion scripts ask
 * `lllm` for models, package refs and run ids, as they would an installed one.
 */
export function lllmOnPath(): string {
  const bin = tempDir("lllm-completion-bin-");
  writeFileSync(path.join(bin, "lllm"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(path.join(bin, "lllm"), 0o755);
  return bin;
}

/** The files of `hostileRepo`, as they are before anything completes in it. */
const HOSTILE_FILES = ["$(touch PWNED_FILE).yaml", "lllm.config.mjs", "lllm_packages"];

/**
 * A clone of someone else's repository, as a completion meets it: a package (found in ./lllm_packages) whose
 * tactic files are named `$(touch PWNED).yaml`, `` `touch PWNED_BACKQUOTE`.yaml `` and `q$(touch PWNED_Q).yaml`
 * (one a prefix typed at a prompt completes alone), such a file in the folder itself, an `lllm.config.mjs` and a
 * tool file that each leave a file behind when they run. `ran()` lists what appeared in the folder since: nothing,
 * when nothing ran.
 */
export function hostileRepo(): { dir: string; ran: () => string[] } {
  const leave = (name: string): string => `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL(${JSON.stringify(name)}, import.meta.url), "ran");\nexport default {};\n`;
  const dir = tempTree({
    "$(touch PWNED_FILE).yaml": "agent_configs: []\n",
    "lllm.config.mjs": leave("./CONFIG_RAN"),
    "lllm_packages/evil/lllm.yaml": "name: evil\n",
    "lllm_packages/evil/tactics/$(touch PWNED).yaml": "agent_configs: []\n",
    "lllm_packages/evil/tactics/`touch PWNED_BACKQUOTE`.yaml": "agent_configs: []\n",
    "lllm_packages/evil/tactics/q$(touch PWNED_Q).yaml": "agent_configs: []\n",
    "lllm_packages/evil/tools/spy.mjs": leave("../../../TOOL_RAN"),
  }, "lllm-hostile-");
  return { dir, ran: () => readdirSync(dir).filter((name) => !HOSTILE_FILES.includes(name)).sort() };
}

/** The package refs of `hostileRepo`'s tactics, as lllm lists them. */
export const HOSTILE_REFS = ["evil.tactics:$(touch PWNED)", "evil.tactics:`touch PWNED_BACKQUOTE`", "evil.tactics:q$(touch PWNED_Q)"];
