#!/usr/bin/env node
// Thin launcher: everything lives in the built CLI so start-up stays a single import.
import module from "node:module";

// Node 22.1+ keeps compiled code of lllm and its dependencies on disk between runs (in the OS temp folder);
// older Node versions have no such cache and start as before.
module.enableCompileCache?.();

import("../dist/cli/main.js").then((cli) => cli.main(process.argv)).catch((error) => {
  process.stderr.write(`lllm: could not start: ${error?.message ?? error}\nRun \`npm run build\` in the lllm folder first.\n`);
  process.exitCode = 1;
});
