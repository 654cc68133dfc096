#!/usr/bin/env node
// Thin launcher: everything lives in the built CLI so start-up stays a single import.
import("../dist/cli/main.js").then((cli) => cli.main(process.argv)).catch((error) => {
  process.stderr.write(`lllm: could not start: ${error?.message ?? error}\nRun \`npm run build\` in the lllm folder first.\n`);
  process.exitCode = 1;
});
