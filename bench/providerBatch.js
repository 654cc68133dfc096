#!/usr/bin/env node
// `lllm batch --provider-batch` against the same batch run live, side by side in the same run, both against the mock
// OpenAI server of lllm/testing (in this process; its batch jobs end at the first poll): a three-round tool-using
// tactic (two `add` tool rounds, then the answer) over N items. Reported: peak RSS and CPU time (user + system, from
// bench/measure.py) of each, their ratio, and lllm's CPU per item per round: (cpu(N) - cpu(small)) / (N - small) / 3.
//
// Usage: node bench/providerBatch.js [--items 1000,10000] [--small 100] [--live-concurrency 64] [--repeat 1]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { measured, usageOf } from "./measured.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const sizes = flag("--items", "1000,10000").split(",").map(Number).filter((value) => value > 0);
const small = Number(flag("--small", "100"));
const liveConcurrency = flag("--live-concurrency", "64");
const repeat = Math.max(1, Number(flag("--repeat", "1")));

const { startMockOpenAIServer } = await import(path.join(root, "dist/testing/index.js"));

function toolResults(body) {
  return (body.messages ?? []).filter((message) => message.role === "tool").map((message) => String(message.content));
}
const last = (text) => Number(/(\d+)\D*$/.exec(text)?.[1] ?? 0);
const usage = { prompt_tokens: 1000, completion_tokens: 100 };
/**
 * A mock per run: it keeps every job's requests and answers (for tests to look at), which over several runs of
 * 100,000 items would fill this process's memory.
 */
const startMock = () =>
  startMockOpenAIServer({
    handler: (body) => {
      const results = toolResults(body);
      if (results.length === 0) return { tool_calls: [{ name: "add", arguments: { a: 1, b: 2 } }], usage };
      if (results.length === 1) return { tool_calls: [{ name: "add", arguments: { a: last(results[0]), b: 10 } }], usage };
      return { text: `sum ${last(results[1])}`, usage };
    },
    batch: { delayMs: 0 },
  });

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-provider-batch-"));
mkdirSync(path.join(dir, "kit", "tools"), { recursive: true });
writeFileSync(path.join(dir, "kit", "lllm.toml"), '[package]\nname = "kit"\nversion = "1.0.0"\n');
writeFileSync(path.join(dir, "kit", "tools", "add.mjs"), 'export const add = { name: "add", description: "Adds.", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }, run: ({ a, b }) => String(a + b) };\n');
const tactic = path.join(dir, "tactic.yaml");

async function run(count, mode) {
  const mock = await startMock();
  writeFileSync(tactic, `name: adder\npackages: [./kit]\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    invoker_config: {base_url: "${mock.url}", api_key_env: MOCK_KEY}\n    system_prompt: Add.\n    tools: [kit.tools:add]\n`);
  try {
    return await runAgainst(count, mode);
  } finally {
    await mock.close();
  }
}

function runAgainst(count, mode) {
  const inputs = path.join(dir, `items-${count}.txt`);
  writeFileSync(inputs, Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n"));
  const home = mkdtempSync(path.join(dir, "home-"));
  const out = path.join(home, "out.jsonl");
  const extra = mode === "provider" ? ["--provider-batch", "--poll-interval", "0.2"] : ["--concurrency", liveConcurrency];
  return new Promise((resolve, reject) => {
    const child = spawn(...measured(process.execPath, [path.join(root, "bin/lllm.js"), "batch", tactic, "--inputs", inputs, "--lines", "--out", out, "--no-log", "--quiet", ...extra]), { cwd: root, env: { ...process.env, NO_COLOR: "1", LLLM_HOME: home, MOCK_KEY: "sk-bench" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => {
      rmSync(home, { recursive: true, force: true });
      const { maxrssKib, cpuMs } = usageOf(stderr);
      if (code !== 0 || Number.isNaN(cpuMs)) return reject(new Error(`${mode} ${count} exited ${code}: ${stderr.slice(-2000)}`));
      resolve({ rssMib: maxrssKib / 1024, cpuMs });
    });
  });
}

/** The lowest and highest of several runs (a single run: nothing). */
const range = (values) => (values.length < 2 ? "" : ` [${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}]`);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Both modes, taking turns (a machine that gets busier part-way is busier for both), the median of each. */
async function measure(count) {
  const samples = { live: [], provider: [] };
  for (let index = 0; index < repeat; index += 1) {
    for (const mode of ["live", "provider"]) samples[mode].push(await run(count, mode));
  }
  const summary = (list) => ({ rssMib: median(list.map((sample) => sample.rssMib)), cpuMs: median(list.map((sample) => sample.cpuMs)), rssRange: range(list.map((sample) => sample.rssMib)) });
  return { live: summary(samples.live), provider: summary(samples.provider) };
}

try {
  console.log(`\nlllm batch --provider-batch vs live (three rounds, two tool calls per item; live --concurrency ${liveConcurrency}; median of ${repeat})`);
  const base = await measure(small);
  for (const count of sizes) {
    const { live, provider } = await measure(count);
    const perItem = (result, mode) => (result.cpuMs - base[mode].cpuMs) / (count - small) / 3;
    console.log(`  ${String(count).padStart(7)} items: peak RSS live ${live.rssMib.toFixed(0)} MiB${live.rssRange}, provider batch ${provider.rssMib.toFixed(0)} MiB${provider.rssRange} (${(provider.rssMib / live.rssMib).toFixed(2)}x live); CPU live ${(live.cpuMs / 1000).toFixed(1)} s, provider batch ${(provider.cpuMs / 1000).toFixed(1)} s (${(provider.cpuMs / live.cpuMs).toFixed(2)}x); per item per round: live ${perItem(live, "live").toFixed(3)} ms, provider batch ${perItem(provider, "provider").toFixed(3)} ms`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
