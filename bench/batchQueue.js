#!/usr/bin/env node
// `lllm batch --queue` (BullMQ on Redis) with 1 and with 2 `lllm worker`s, against one `lllm batch` process without
// a queue: the same items, the same mock server answering after 20 ms, side by side in the same run. A private
// redis-server (127.0.0.1, a free port, no persistence) is started for the bench and stopped at the end, with the
// mock and every worker: no process is left behind.
//
// Usage: node bench/batchQueue.js [--items 1000] [--concurrency 32] [--repeat 2] [--delay 20]
// `--concurrency` is what each process runs at once: the one process, and each worker (2 workers run twice as
// many). Per-item CPU adds up every lllm process of the run (producer and workers), start-up included.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { leanMockSource } from "./leanMock.mjs";
import { measured, usageOf } from "./measured.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const items = Number(flag("--items", "1000"));
const concurrency = Number(flag("--concurrency", "32"));
const repeat = Math.max(1, Number(flag("--repeat", "2")));
const delayMs = Number(flag("--delay", "20"));

if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) {
  console.error("bench/batchQueue.js needs redis-server (apt-get install redis-server)");
  process.exit(2);
}

/**
 * Every process this bench started, stopped in the end whatever happens: each leads a process group of its own, killed
 * whole (an lllm process runs under bench/measure.py, which a kill of that process alone would leave behind).
 */
const children = new Set();
function start(command, commandArgs, options = {}) {
  const child = spawn(command, commandArgs, { cwd: root, ...options, detached: true, env: { ...process.env, NO_COLOR: "1", ...options.env } });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}
async function stopAll() {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", resolve);
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            child.kill("SIGKILL");
          }
        }),
    ),
  );
}
// The processes lead groups of their own: a Ctrl-C or a closed terminal reaches this process only, which stops them
// and removes its folder (`dir`, made below) before it ends.
let dir;
for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]]) {
  process.once(signal, () =>
    void stopAll().then(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      process.exit(128 + number);
    }),
  );
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** A private redis-server; resolves with its URL once it accepts connections. */
async function startRedis() {
  const port = await freePort();
  const child = start("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
      if (text.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${text}`)));
  });
  return `redis://127.0.0.1:${port}`;
}

/** The mock in a process of its own; it keeps no record of the requests. */
async function startMock() {
  const code = leanMockSource(delayMs);
  const child = start(process.execPath, ["--input-type=module", "-e", code], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve) => child.stdout.once("data", (chunk) => resolve(String(chunk).trim())));
}

/**
 * An lllm process under bench/measure.py (a signal to `child` reaches lllm); resolves at its exit with its code, wall
 * time, CPU, peak memory and stderr.
 */
function lllm(commandArgs, env) {
  const child = start(...measured(process.execPath, [path.join(root, "bin/lllm.js"), ...commandArgs]), { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const done = new Promise((resolve) => child.once("close", (code, signal) => {
    const { wallMs, cpuMs, maxrssKib } = usageOf(stderr);
    resolve({ code, signal, ms: wallMs, cpuMs, maxrssKib, stderr });
  }));
  return { child, done, stderr: () => stderr };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const spread = (values, digits = 2) => (values.length === 1 ? values[0].toFixed(digits) : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`);

dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-queue-"));
try {
  const [redisUrl, mockUrl] = await Promise.all([startRedis(), startMock()]);
  // In a package, as a queued batch's tactic must be when it sets invoker_config: the workers get the package (-p).
  const kit = path.join(dir, "kit");
  mkdirSync(path.join(kit, "tactics"), { recursive: true });
  const tactic = path.join(kit, "tactics", "echo.yaml");
  writeFileSync(tactic, `name: echo\npackages: [..]\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${mockUrl}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
  const file = path.join(dir, "items.txt");
  writeFileSync(file, Array.from({ length: items }, (_, index) => `q${index + 1}`).join("\n"));
  let runs = 0;
  const env = () => ({ LLLM_HOME: path.join(dir, `home-${(runs += 1)}`), MOCK_KEY: "sk-bench" });
  const out = () => path.join(dir, `out-${(runs += 1)}.jsonl`);
  const batchArgs = (extra) => ["batch", tactic, "--inputs", file, "--lines", "--out", out(), "--no-log", "--quiet", ...extra];
  const complete = (result, label) => {
    if (result.code !== 0) throw new Error(`${label} exited ${result.code ?? result.signal}: ${result.stderr}`);
  };
  const lines = (outFile) => readFileSync(outFile, "utf8").split("\n").filter(Boolean).length;

  /** One process, no queue. */
  async function alone() {
    const args = batchArgs(["--concurrency", String(concurrency)]);
    const result = await lllm(args, env()).done;
    complete(result, "lllm batch");
    if (lines(args[6]) !== items) throw new Error(`lllm batch wrote ${lines(args[6])} of ${items} lines`);
    return { ms: result.ms, cpuMs: result.cpuMs };
  }

  /** The producer with `workers` workers (started first, stopped with SIGTERM once the batch is done). */
  async function queued(workers) {
    const started = Array.from({ length: workers }, () => lllm(["worker", "--queue", redisUrl, "-p", kit, "--concurrency", String(concurrency), "--no-log"], env()));
    // Each worker says it waits for batches once it is connected.
    await Promise.all(started.map((worker) => new Promise((resolve) => {
      const check = () => (worker.stderr().includes("waiting for batches") ? resolve() : setTimeout(check, 20));
      check();
    })));
    // The producer keeps every worker's slots fed.
    const args = batchArgs(["--queue", redisUrl, "--concurrency", String(2 * concurrency * workers)]);
    const result = await lllm(args, env()).done;
    complete(result, "lllm batch --queue");
    if (lines(args[6]) !== items) throw new Error(`lllm batch --queue wrote ${lines(args[6])} of ${items} lines`);
    for (const worker of started) worker.child.kill("SIGTERM");
    const ended = await Promise.all(started.map((worker) => worker.done));
    return { ms: result.ms, cpuMs: result.cpuMs + ended.reduce((sum, worker) => sum + worker.cpuMs, 0) };
  }

  console.log(`lllm batch --queue (BullMQ on a private redis-server) vs one process: ${items} items, mock answering after ${delayMs} ms, concurrency ${concurrency} per process, median (min–max) of ${repeat} runs`);
  const rows = { "one process, no queue": [], "queue, 1 worker": [], "queue, 2 workers": [] };
  for (let round = 0; round < repeat; round += 1) {
    rows["one process, no queue"].push(await alone());
    rows["queue, 1 worker"].push(await queued(1));
    rows["queue, 2 workers"].push(await queued(2));
  }
  const base = rows["one process, no queue"];
  for (const [label, results] of Object.entries(rows)) {
    const rates = results.map((result) => items / (result.ms / 1000));
    const ratios = results.map((result, index) => base[index].ms / result.ms);
    console.log(`  ${label.padEnd(22)}: ${spread(rates, 0)} items/s, ${spread(ratios)}x one process; CPU of every lllm process ${spread(results.map((result) => result.cpuMs / items))} ms/item (start-up included)`);
  }
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
