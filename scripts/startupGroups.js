// The chunk groups of the bundle (scripts/bundle.js) that keep start-up to few files. Node pays for every ES module
// it loads (a resolution, a read, a compilation and a link: about half a millisecond each on a busy 2-core machine,
// for a chunk of a few hundred bytes as for one of 500 KB). Left to itself the bundler cuts a chunk for every
// different set of entries and lazy imports that reach a module: a `lllm run` loaded some 60 files, `import "lllm"`
// as many. Modules that are always loaded together go into one chunk each instead:
// - cli: what cli/main.js imports statically (every command loads it);
// - run: what the `run` command (cli/run.js) imports statically and the CLI does not: config, registry, tools,
//   tactics, agent, providers, the run store: the hot path of `lllm run`, and most of `validate`, `chat`, `batch`;
//   with the `lllm` that package files import (packageApi/), which a run's TypeScript tools load;
// - library: the rest of what `import "lllm"` (and lllm/testing, and a package's `import … from "lllm"`) loads.
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

/** `codeSplitting.groups` entries for the modules of the build in `out`; each module in one group at most. */
export function startupGroups(out) {
  const cliEntry = path.resolve(out, "cli/main.js");
  const libraryEntries = ["index.js", "packageApi/index.js", "testing/index.js"];
  const runEntries = ["cli/run.js", "packageApi/index.js"];
  // The entry modules stay in their entry chunks, which then export exactly their own names.
  const entries = new Set([cliEntry, ...libraryEntries.map((entry) => path.resolve(out, entry))]);
  const cli = new Set([...staticClosure(out, "cli/main.js")].filter((file) => !entries.has(file)));
  const run = new Set(runEntries.flatMap((entry) => [...staticClosure(out, entry)]).filter((file) => !cli.has(file) && !entries.has(file)));
  const library = new Set(libraryEntries.flatMap((entry) => [...staticClosure(out, entry)]).filter((file) => !cli.has(file) && !run.has(file) && !entries.has(file)));
  if (run.size === 0) throw new Error("startupGroups: cli/run.js has no static imports in the build: has it moved?");
  // Together the sets hold every module their members import statically: the bundler need not pull any in.
  const group = (name, members) => ({ name, test: (id) => members.has(id), includeDependenciesRecursively: false });
  return [group("cli", cli), group("run", run), group("library", library)];
}
