#!/usr/bin/env node
// Benchmarks of lllm, reported as ratios against a baseline measured in the same run (never absolute timings
// in tests: these machines are shared and noisy). Usage: npm run bench [-- --runs N] [-- --only NAME]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1]) || 15;
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
const lllm = path.join(root, "bin", "lllm.js");
const example = path.join(root, "packages-example", "weather", "tactics", "weather.yaml");

function timeCommand(command, commandArgs) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(" ")} failed: ${result.stderr}`);
  return ms;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Run the cases interleaved (baseline, a, b, baseline, a, b, …) so drift in machine load hits all alike. */
function compare(title, cases) {
  const samples = cases.map(() => []);
  for (let run = 0; run < runs + 1; run++) {
    cases.forEach((entry, index) => {
      const ms = timeCommand(entry.command, entry.args);
      if (run > 0) samples[index].push(ms); // the first round warms caches (jiti's transpile cache, the OS)
    });
  }
  const base = median(samples[0]);
  console.log(`\n${title} (median of ${runs} runs)`);
  cases.forEach((entry, index) => {
    const value = median(samples[index]);
    console.log(`  ${entry.name.padEnd(34)} ${value.toFixed(1).padStart(8)} ms   ${(value / base).toFixed(2)}x baseline`);
  });
}

const suites = {
  startup: () =>
    compare("Start-up: the CLI against a bare node process", [
      { name: "node -e 0 (baseline)", command: process.execPath, args: ["-e", "0"] },
      { name: "lllm --version", command: process.execPath, args: [lllm, "--version"] },
      { name: "lllm validate <weather example>", command: process.execPath, args: [lllm, "validate", example] },
    ]),
};

for (const [name, suite] of Object.entries(suites)) {
  if (!only || only === name) await suite();
}
