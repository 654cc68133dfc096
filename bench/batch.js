#!/usr/bin/env node
// `lllm batch` against its floor (bench/batchFloor.mjs: a bare limited loop over the openai SDK making the same
// calls), both against the mock server answering after 20 ms, side by side in the same run; and peak memory at
// several dataset sizes (flat means independent of the size), with and without the run store: peak RSS, and the
// peak live heap (sampled after a full collection every second, bench/report-heap.mjs).
//
// Usage: node bench/batch.js [--items 1000] [--concurrency 1,8,32,128] [--repeat 3] [--delay 20] [--log off|on]
//                            [--memory 1000,100000] [--memory-delay 1] [--memory-log both|on|off]
// `--log on` measures the throughput part with the run store on (default off: `--no-log`, lllm's own cost alone).
// `--memory 0` skips the memory part; `--concurrency 0` skips the throughput part.
//
// The machine may be shared: CPU time (user + system, from bench/measure.py) is a steadier figure than wall
// time, and every figure is the median of `--repeat` runs with its spread. Per-item CPU separates start-up from
// the work of each item: (cpu(N items) - cpu(1 item)) / (N - 1), for lllm and for the floor; lllm's own per-item
// cost is the difference. Ratios and per-item figures are printed, never asserted in tests.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { leanMockSource } from "./leanMock.mjs";
import { measured, usageOf } from "./measured.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const list = (text) => text.split(",").map(Number).filter((value) => value > 0);
const items = Number(flag("--items", "1000"));
const levels = list(flag("--concurrency", "1,8,32,128"));
const repeat = Math.max(1, Number(flag("--repeat", "3")));
const delayMs = Number(flag("--delay", "20"));
const memorySizes = list(flag("--memory", "1000,100000"));
const memoryDelayMs = Number(flag("--memory-delay", "1"));
const memoryLog = flag("--memory-log", "both");
const throughputLog = flag("--log", "off") === "on";

/**
 * Run a node program to its end under bench/measure.py: its wall time, peak memory and CPU time; its peak live heap
 * too when it loads report-heap.
 */
function run(commandArgs, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(...measured(process.execPath, commandArgs), { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${commandArgs.join(" ")} exited ${code}: ${stderr}`));
      const { wallMs, maxrssKib, cpuMs } = usageOf(stderr);
      const heap = /live_heap_peak_kib=(\d+)/.exec(stderr);
      resolve({ ms: wallMs, maxrssKib, cpuMs, liveHeapKib: heap ? Number(heap[1]) : NaN });
    });
  });
}

/** The mock server (bench/leanMock.mjs) in a process of its own. */
async function startMock(answerAfterMs) {
  const code = leanMockSource(answerAfterMs);
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise((resolve) => child.stdout.once("data", (chunk) => resolve(String(chunk).trim())));
  return { url, stop: () => child.kill("SIGKILL") };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
/** `median (min–max)` of a series, with `digits` decimals. */
const spread = (values, digits = 2) => (values.length === 1 ? values[0].toFixed(digits) : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`);

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-batch-"));
const mocks = [];
try {
  const dataset = (count) => {
    const file = path.join(dir, `items-${count}.txt`);
    writeFileSync(file, Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n"));
    return file;
  };
  let outs = 0;
  const lllmBatch = ({ mock, file, concurrency, log = false, heap = false }) => {
    const tactic = path.join(dir, "echo.yaml");
    writeFileSync(tactic, `name: echo\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${mock.url}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
    const home = path.join(dir, `home-${(outs += 1)}`);
    const env = { LLLM_HOME: home, MOCK_KEY: "sk-bench" };
    const out = path.join(dir, `out-${outs}.jsonl`);
    const heapArgs = heap ? ["--expose-gc", "--import", path.join(root, "bench/report-heap.mjs")] : [];
    return run([...heapArgs, path.join(root, "bin/lllm.js"), "batch", tactic, "--inputs", file, "--lines", "--concurrency", String(concurrency), "--out", out, ...(log ? [] : ["--no-log"]), "--quiet"], env).finally(() => rmSync(home, { recursive: true, force: true }));
  };
  const floorBatch = ({ mock, count, concurrency }) => run([path.join(root, "bench/batchFloor.mjs"), String(count), String(concurrency)], { OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "sk-bench" });

  if (levels.length > 0) {
    const mock = await startMock(delayMs);
    mocks.push(mock);
    const file = dataset(items);
    const one = dataset(1);
    console.log(`lllm batch (run store ${throughputLog ? "on" : "off"}) vs the floor (openai SDK, limited loop): ${items} items, mock answering after ${delayMs} ms, median (min–max) of ${repeat} runs side by side`);
    // Start-up: the CPU of a 1-item run, taken in every round so that per-item figures compare like with like.
    const startup = { floor: [], lllm: [] };
    const rows = new Map(levels.map((concurrency) => [concurrency, { floor: [], lllm: [] }]));
    for (let round = 0; round < repeat; round += 1) {
      startup.floor.push((await floorBatch({ mock, count: 1, concurrency: 1 })).cpuMs);
      startup.lllm.push((await lllmBatch({ mock, file: one, concurrency: 1, log: throughputLog })).cpuMs);
      for (const concurrency of levels) {
        const row = rows.get(concurrency);
        row.floor.push(await floorBatch({ mock, count: items, concurrency }));
        row.lllm.push(await lllmBatch({ mock, file, concurrency, log: throughputLog }));
      }
    }
    const floorStart = median(startup.floor);
    const lllmStart = median(startup.lllm);
    console.log(`  start-up (a 1-item run): floor ${spread(startup.floor, 0)} ms CPU, lllm ${spread(startup.lllm, 0)} ms CPU`);
    for (const [concurrency, row] of rows) {
      const rate = (results) => results.map((result) => items / (result.ms / 1000));
      const ratios = row.lllm.map((result, index) => row.floor[index].ms / result.ms);
      const perItem = (results, start) => results.map((result) => (result.cpuMs - start) / (items - 1));
      const floorPerItem = perItem(row.floor, floorStart);
      const lllmPerItem = perItem(row.lllm, lllmStart);
      const own = lllmPerItem.map((value, index) => value - floorPerItem[index]);
      console.log(
        `  concurrency ${String(concurrency).padStart(3)}: floor ${spread(rate(row.floor), 0)} items/s, lllm ${spread(rate(row.lllm), 0)} items/s, ratio ${spread(ratios)}x;` +
          ` CPU ms/item: floor ${spread(floorPerItem)}, lllm ${spread(lllmPerItem)} (lllm's own ${spread(own)}), lllm incl. start-up ${spread(row.lllm.map((result) => result.cpuMs / items))}`,
      );
    }
  }

  if (memorySizes.length > 0) {
    const mock = await startMock(memoryDelayMs);
    mocks.push(mock);
    const logModes = memoryLog === "both" ? [false, true] : [memoryLog === "on"];
    console.log(`peak memory of lllm batch (text lines, concurrency 32, mock answering after ${memoryDelayMs} ms):`);
    for (const log of logModes) {
      for (const count of memorySizes) {
        const result = await lllmBatch({ mock, file: dataset(count), concurrency: 32, log, heap: true });
        console.log(`  ${String(count).padStart(7)} items, ${log ? "logging on " : "--no-log   "}: ${(result.maxrssKib / 1024).toFixed(0)} MB peak RSS, ${(result.liveHeapKib / 1024).toFixed(1)} MB peak live heap, ${(result.ms / 1000).toFixed(1)} s, ${(result.cpuMs / count).toFixed(2)} ms CPU/item`);
      }
    }
  }
} finally {
  for (const mock of mocks) mock.stop();
  rmSync(dir, { recursive: true, force: true });
}
