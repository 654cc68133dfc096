#!/usr/bin/env node
// `lllm test` replaying cassettes against its floor (bench/testFloor.mjs: the same replays through the library,
// runRecorded with a scripted model per case over turns parsed once, without the test layer), side by side in the
// same run: the weather tactic, one tool round a case, four assertions each, the run store on, one LLLM_HOME whose
// caches are warm (as after any earlier run).
//
// Usage: node bench/test.js [--cases 1000] [--concurrency <CPUs>] [--repeat 3]
//
// Per-case CPU separates start-up from the work of each case: (cpu(N cases) - cpu(1 case)) / (N - 1), for
// `lllm test` and for the floor; the test layer's own cost is the difference. The tool (get_weather) does next to
// nothing, so lllm's CPU per case is the whole per-case figure. Printed, never asserted in tests.
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { measured, usageOf } from "./measured.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const cases = Number(flag("--cases", "1000"));
const concurrency = Number(flag("--concurrency", String(os.availableParallelism())));
const repeat = Math.max(1, Number(flag("--repeat", "3")));

function run(commandArgs, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(...measured(process.execPath, commandArgs), { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${commandArgs.join(" ")} exited ${code}: ${stderr.slice(-2000)}`));
      const usage = usageOf(stderr);
      resolve({ ms: usage.wallMs, cpuMs: usage.cpuMs });
    });
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values, digits = 2) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-test-"));
try {
  for (const name of ["weather", "search"]) cpSync(path.join(root, "packages-example", name), path.join(dir, name), { recursive: true });
  const tests = path.join(dir, "weather", "tests");
  rmSync(tests, { recursive: true, force: true });
  const caseText = (index) => `  - name: case-${index}\n    input: What is the weather in Paris?\n    assert:\n      - contains: Paris\n      - tool-called: {name: get_weather, args: {city: Paris}}\n      - max-tool-calls: 2\n      - not-contains: Error\n`;
  const writeTests = (folder, count) => {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, "bench.test.yaml"), `tactic: ../../tactics/weather.yaml\ncases:\n${Array.from({ length: count }, (_, index) => caseText(index)).join("")}`);
  };
  // Record one case against the example's stand-in model, then give every case a copy of its cassette.
  const one = path.join(tests, "one");
  writeTests(one, 1);
  const { startMockOpenAIServer } = await import(path.join(root, "dist/bundle/testing.js"));
  const { answer } = await import(path.join(root, "packages-example/weather/tests/mock-model.mjs"));
  const server = await startMockOpenAIServer({ handler: answer });
  // One LLLM_HOME, as on a user's machine: its caches (transpiled tools, parsed YAML) are warm after the first run;
  // each run starts with an empty run store.
  const home = () => {
    const folder = path.join(dir, "home");
    for (const file of ["logs.db", "logs.db-wal", "logs.db-shm"]) rmSync(path.join(folder, file), { force: true });
    return folder;
  };
  await run([path.join(root, "bin/lllm.js"), "test", one, "--record"], { LLLM_HOME: home(), OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench" });
  await server.close();
  const recorded = path.join(one, "__cassettes__", "bench.test.yaml", "case-0.yaml");
  const many = path.join(tests, "many");
  writeTests(many, cases);
  const cassettes = path.join(many, "__cassettes__", "bench.test.yaml");
  mkdirSync(cassettes, { recursive: true });
  for (let index = 0; index < cases; index += 1) copyFileSync(recorded, path.join(cassettes, `case-${index}.yaml`));
  const tactic = path.join(dir, "weather", "tactics", "weather.yaml");

  const lllmTest = (folder) => run([path.join(root, "bin/lllm.js"), "test", folder, "--offline", "--concurrency", String(concurrency)], { LLLM_HOME: home() });
  const floor = (count, folder) => run([path.join(root, "bench/testFloor.mjs"), tactic, folder, String(count), String(concurrency)], { LLLM_HOME: home() });
  const samples = { lllm: [], floor: [], lllmOne: [], floorOne: [] };
  // Warm the caches (transpiled tools, parsed YAML; the library's transpile cache is jiti's own), as any earlier
  // run would have: a cold start-up in the 1-case run only would skew the per-case figures.
  await lllmTest(many);
  await floor(1, recorded);
  for (let round = 0; round < repeat; round += 1) {
    samples.floorOne.push(await floor(1, recorded));
    samples.lllmOne.push(await lllmTest(one));
    samples.floor.push(await floor(cases, recorded));
    samples.lllm.push(await lllmTest(many));
  }
  const perCase = (results, ones) => results.map((result, index) => (result.cpuMs - ones[index].cpuMs) / (cases - 1));
  const lllmPerCase = perCase(samples.lllm, samples.lllmOne);
  const floorPerCase = perCase(samples.floor, samples.floorOne);
  const rate = (results) => results.map((result) => cases / (result.ms / 1000));
  const ratio = samples.lllm.map((result, index) => samples.floor[index].ms / result.ms);
  console.log(`lllm test (replaying ${cases} cassettes, the weather tactic, one tool round a case) vs the same replays through the library (runRecorded + a scripted model), concurrency ${concurrency}, median (min–max) of ${repeat} runs side by side`);
  console.log(`  throughput: lllm test ${spread(rate(samples.lllm), 0)} cases/s, library ${spread(rate(samples.floor), 0)} cases/s, ratio ${spread(ratio)}x (target >= 0.8)`);
  console.log(`  CPU ms per case: lllm test ${spread(lllmPerCase)} (target <= 3), library ${spread(floorPerCase)}, the test layer's own ${spread(lllmPerCase.map((value, index) => value - floorPerCase[index]))}`);
  console.log(`  start-up (a 1-case run): lllm test ${spread(samples.lllmOne.map((result) => result.cpuMs), 0)} ms CPU, library ${spread(samples.floorOne.map((result) => result.cpuMs), 0)} ms CPU`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
