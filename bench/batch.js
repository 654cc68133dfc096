#!/usr/bin/env node
// `lllm batch` against its floor (bench/batchFloor.mjs: a bare limited loop over the openai SDK making the same
// calls), both against the mock server answering after 20 ms, in the same run; and peak memory at two dataset
// sizes (flat means independent of the size). Usage: node bench/batch.js [--items N] [--concurrency 1,8,32,128]
// [--memory 1000,10000]. Ratios and per-item figures, never asserted in tests.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const items = Number(flag("--items", "1000"));
const levels = flag("--concurrency", "1,8,32,128").split(",").map(Number);
const memorySizes = flag("--memory", "1000,10000").split(",").map(Number);
const delayMs = Number(flag("--delay", "20"));

/** Run a command to its end; its time, its stderr, and (with report-rss) its peak memory. */
function run(command, commandArgs, env) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, commandArgs, { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0) return reject(new Error(`${commandArgs.join(" ")} exited ${code}: ${stderr}`));
      const rss = /maxrss_kib=(\d+) cpu_us=(\d+)/.exec(stderr);
      resolve({ ms, maxrssKib: rss ? Number(rss[1]) : undefined, cpuMs: rss ? Number(rss[2]) / 1000 : undefined });
    });
  });
}

/** The mock server in a process of its own, so that neither side's load slows the other. */
async function startMock() {
  const code = `const { startMockOpenAIServer } = await import(${JSON.stringify(path.join(root, "dist/testing/index.js"))});
const server = await startMockOpenAIServer({ handler: async () => { await new Promise((r) => setTimeout(r, ${delayMs})); return { text: "answer", usage: { prompt_tokens: 10, completion_tokens: 2 } }; } });
console.log(server.url);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve) => child.stdout.once("data", (chunk) => resolve(String(chunk).trim())));
  return { url, stop: () => child.kill("SIGKILL") };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-batch-"));
const mock = await startMock();
try {
  const tactic = path.join(dir, "echo.yaml");
  writeFileSync(tactic, `name: echo\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${mock.url}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
  const dataset = (count) => {
    const file = path.join(dir, `items-${count}.txt`);
    writeFileSync(file, Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n"));
    return file;
  };
  const env = { LLLM_HOME: path.join(dir, "home"), MOCK_KEY: "sk-bench", OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "sk-bench" };
  const lllmBatch = (file, concurrency) => run(process.execPath, ["--import", path.join(root, "bench/report-rss.mjs"), path.join(root, "bin/lllm.js"), "batch", tactic, "--inputs", file, "--lines", "--concurrency", String(concurrency), "--out", path.join(dir, `out-${concurrency}-${Date.now()}.jsonl`), "--no-log", "--quiet"], env);
  const file = dataset(items);
  console.log(`lllm batch vs the floor (openai SDK, limited loop): ${items} items, mock answering after ${delayMs} ms`);
  for (const concurrency of levels) {
    const floor = await run(process.execPath, [path.join(root, "bench/batchFloor.mjs"), String(items), String(concurrency)], env);
    const lllm = await lllmBatch(file, concurrency);
    const ratio = floor.ms / lllm.ms;
    console.log(`  concurrency ${String(concurrency).padStart(3)}: floor ${(items / (floor.ms / 1000)).toFixed(0)} items/s, lllm ${(items / (lllm.ms / 1000)).toFixed(0)} items/s (${ratio.toFixed(2)}x the floor's throughput; lllm's own time ${((lllm.ms - floor.ms) / items).toFixed(2)} ms/item by wall clock, ${(lllm.cpuMs / items).toFixed(2)} ms/item of CPU, start-up included)`);
  }
  console.log("peak memory of lllm batch (concurrency 32):");
  for (const count of memorySizes) {
    const result = await lllmBatch(dataset(count), 32);
    console.log(`  ${String(count).padStart(7)} items: ${(result.maxrssKib / 1024).toFixed(0)} MB peak RSS, ${(result.ms / 1000).toFixed(1)} s`);
  }
} finally {
  mock.stop();
  rmSync(dir, { recursive: true, force: true });
}
