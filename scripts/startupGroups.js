// The chunk groups of the bundle (scripts/bundle.js) that keep start-up to few files. Node pays for every file it
// loads (a resolution, a read, a compilation or its cached code, a link: about half a millisecond each on a busy
// 2-core machine, for a chunk of a few hundred bytes as for one of 500 KB). Left to itself the bundler cuts a chunk for every
// different set of entries and lazy imports that reach a module: a `lllm run` loaded some 60 files, `import "lllm"`
// as many. Modules that are always loaded together go into one chunk each instead, in layers, each layer what its
// starting points import statically and no earlier layer holds:
// - codeCache: util/codeCache.js and what it imports, which bin/lllm.js loads first and the rest through;
// - cli: cli/main.js's imports (every command loads them);
// - tactic: loading, checking and binding a tactic (`lllm validate`, and the first half of every run), with the
//   `lllm` that package files import (packageApi/), which TypeScript tools load;
// - run: the rest of the `run` command: the agent loop, patterns, providers' calls, the run store;
// - library: the rest of what `import "lllm"` and lllm/testing load.
// A module reached only through `import()` is in none of them: it stays in a chunk of its own, loaded on first use.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The modules of the per-file build in `out` (tsc's output) that `entry` imports statically, itself included. */
function staticClosure(out, entry) {
  const seen = new Set();
  const pending = [path.resolve(out, entry)];
  while (pending.length > 0) {
    const file = pending.pop();
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    // tsc writes each import and re-export as one statement ending in `;` (type-only ones are gone); `import(…)`
    // does not match (no space after `import`).
    for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s(?:[^;]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']/gm)) {
      pending.push(path.resolve(path.dirname(file), match[1]));
    }
  }
  return seen;
}

/** The layers: a group's name and the modules it starts from (their static imports come with them). */
const LAYERS = [
  // First, alone: bin/lllm.js loads it with a plain require() and the rest of the bundle through it (with V8's
  // compiled code kept between runs), so it must not pull in a chunk of the CLI before then.
  ["codeCache", ["util/codeCache.js"]],
  ["cli", ["cli/main.js"]],
  ["tactic", ["cli/validate.js", "packageApi/index.js"]],
  ["run", ["cli/run.js"]],
  ["library", ["index.js", "packageApi/index.js", "testing/index.js"]],
];
/** The entries of the bundle: each stays alone in its chunk, which then exports exactly its own names. */
const ENTRIES = ["cli/main.js", "index.js", "packageApi/index.js", "testing/index.js"];

/** `codeSplitting.groups` entries for the modules of the build in `out`; each module in one group at most. */
export function startupGroups(out) {
  const taken = new Set(ENTRIES.map((entry) => path.resolve(out, entry)));
  const groups = [];
  for (const [name, starts] of LAYERS) {
    const members = new Set(starts.flatMap((start) => [...staticClosure(out, start)]).filter((file) => !taken.has(file)));
    if (members.size === 0) throw new Error(`startupGroups: ${starts.join(", ")} import nothing in the build: has a file moved?`);
    for (const file of members) taken.add(file);
    // Together the layers hold every module their members import statically: the bundler need not pull any in.
    groups.push({ name, test: (id) => members.has(id), includeDependenciesRecursively: false });
  }
  return groups;
}
