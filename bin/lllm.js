#!/usr/bin/env node
// Thin launcher: everything lives in the built CLI (one bundle, scripts/bundle.js) so start-up stays one import.
import { readFileSync } from "node:fs";
import module from "node:module";

// Node 22.1+ keeps compiled code of lllm and its dependencies on disk between runs (in the OS temp folder);
// older Node versions have no such cache and start as before.
module.enableCompileCache?.();

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // Answered here, as the CLI would: scripts call it often, and it needs nothing else loaded.
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  import("../dist/bundle/cli.js").then((cli) => cli.main(process.argv)).catch((error) => {
    process.stderr.write(`lllm: could not start: ${error?.message ?? error}\nRun \`npm run build\` in the lllm folder first.\n`);
    process.exitCode = 1;
  });
}
