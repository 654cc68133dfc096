// `lllm serve` against the same tactic run in-process through the library, in one run (ratios, never absolute
// timings in tests): 2,000 non-streaming requests from 32 concurrent clients, one tool round each, against a mock
// model in a process of its own; the server's added latency (median, p99); the first streamed content chunk
// against the in-process run's first delta; and the server's RSS after 10,000 requests against after 1,000.
// Beside them, the floor of any server of these runs: a bare node:http server around the same runs
// (bench/serveFloor.mjs), with the same client, and the CPU each runner spends a request. On a 2-core machine the
// bench's client, the mock and the runner share the cores, so the floor's ratio is what Node's HTTP and a second
// process cost there (0.82-0.90x on a 2-core VM, December 2026); the gap between it and lllm serve is lllm's own.
// Usage: node bench/serve.js [--requests N] (or npm run bench -- --only serve).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CONCURRENCY = 32;

/** The mock model: a tool call for a new question, an answer after the tool's result; streams when asked. */
export const MOCK = `import { createServer } from "node:http";
const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const last = body.messages[body.messages.length - 1];
    const message = last.role === "tool" ? { role: "assistant", content: "It is sunny in Paris." } : { role: "assistant", content: null, tool_calls: [{ id: "call_" + Math.random().toString(36).slice(2), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] };
    const finish = last.role === "tool" ? "stop" : "tool_calls";
    if (!body.stream) {
      const text = JSON.stringify({ id: "chatcmpl-m", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      return response.end(text);
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finishReason, extra = {}) => response.write("data: " + JSON.stringify({ id: "chatcmpl-m", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra }) + "\\n\\n");
    if (message.tool_calls) chunk({ role: "assistant", tool_calls: message.tool_calls.map((call, index) => ({ index, ...call })) }, null);
    else { chunk({ role: "assistant", content: "It is sunny" }, null); chunk({ content: " in Paris." }, null); }
    chunk({}, finish);
    response.write("data: " + JSON.stringify({ id: "chatcmpl-m", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage }) + "\\n\\n");
    response.end("data: [DONE]\\n\\n");
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port + "/v1"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();`;

/** Start a child and wait for its first stdout line matching `pattern` (or its stderr's). */
function startChild(command, args, options, pattern) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], ...options });
  return new Promise((resolve, reject) => {
    let out = "";
    const look = (chunk) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve({ child, match });
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${out}`)));
  });
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

/** Run `total` jobs with `concurrency` at once; each job's latency in ms, and the wall time. */
async function drive(total, concurrency, job) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const begin = performance.now();
        await job();
        latencies.push(performance.now() - begin);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function post(agent, url, token, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const request = httpRequest(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), authorization: `Bearer ${token}` } }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => (response.statusCode === 200 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`${response.statusCode}: ${Buffer.concat(chunks)}`))));
    });
    request.on("error", reject);
    request.end(text);
  });
}

/** The time to the first content chunk of a streamed request. */
function firstChunk(agent, url, token, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const begin = performance.now();
    let first;
    let buffer = "";
    const request = httpRequest(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), authorization: `Bearer ${token}` } }, (response) => {
      response.on("data", (chunk) => {
        buffer += chunk.toString();
        if (first === undefined && /"content":"[^"]/.test(buffer)) first = performance.now() - begin;
      });
      response.on("end", () => (first === undefined ? reject(new Error(`no content chunk: ${buffer}`)) : resolve(first)));
    });
    request.on("error", reject);
    request.end(text);
  });
}

/** A process's CPU time so far (user + system, ms; Linux's /proc), NaN where there is none to read. */
function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** The kernel's clock ticks a second, in which /proc/PID/stat counts CPU time (100 on Linux's usual builds). */
const CLOCK_TICKS = 100;

/** This process's CPU time so far (user + system, ms). */
function ownCpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function rssMib(pid) {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
}

export async function serveSuite({ root, requests = 2000 }) {
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-serve-"));
  const tactic = path.join(root, "bench", "fixtures", "rounds.yaml");
  const { child: mock, match } = await startChild(process.execPath, ["--input-type=module", "-e", MOCK], {}, /(http:\/\/\S+\/v1)/);
  const env = { ...process.env, LLLM_HOME: home, OPENAI_API_KEY: "bench", OPENAI_BASE_URL: match[1], NO_COLOR: "1" };
  const token = "bench-token-0123456789";
  let server;
  let floor;
  try {
    // In-process: the library's recorded run, as many at once.
    process.env.LLLM_HOME = home;
    process.env.OPENAI_API_KEY = "bench";
    process.env.OPENAI_BASE_URL = match[1];
    const { prepareTactic } = await import(path.join(root, "dist/tactics/prepareTactic.js"));
    const { runRecorded } = await import(path.join(root, "dist/run/runRecorded.js"));
    const prepared = await prepareTactic(tactic, { model: "gpt-4o-mini" });
    const inProcess = (onText) => runRecorded(prepared, { input: "Weather in Paris?", warn: () => {}, ...(onText ? { onText } : {}) }).then((run) => {
      if (!run.ok) throw run.error;
    });
    // Served: `lllm serve` in a process of its own, 32 keep-alive clients.
    // --trace-gc: each full collection's heap after it (the live heap) is read from the server's stdout.
    let liveHeap;
    const startServer = async () => {
      const started = await startChild(process.execPath, ["--trace-gc", path.join(root, "bin/lllm.js"), "serve", tactic, "--model", "gpt-4o-mini", "--http", "127.0.0.1:0", "--token-env", "BENCH_TOKEN", "--concurrency", String(CONCURRENCY)], { env: { ...env, BENCH_TOKEN: token } }, / at (http:\/\/\S+?)\/v1/);
      liveHeap = undefined;
      let gcText = "";
      started.child.stdout.on("data", (chunk) => {
        gcText = (gcText + chunk.toString()).slice(-4096);
        for (const match of gcText.matchAll(/Mark-Compact [\d.]+ \([\d.]+\) -> ([\d.]+) \(/g)) liveHeap = Number(match[1]);
        gcText = gcText.slice(gcText.lastIndexOf("\n") + 1);
      });
      return { child: started.child, base: started.match[1] };
    };
    const first = await startServer();
    server = first.child;
    const base = first.base;
    // The floor: a bare node:http server around the same runs (bench/serveFloor.mjs), measured with the same client.
    const floorStarted = await startChild(process.execPath, [path.join(root, "bench", "serveFloor.mjs"), root, tactic], { env }, / at (http:\/\/\S+?)\/v1/);
    floor = floorStarted.child;
    const agent = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
    const body = { model: "rounds", messages: [{ role: "user", content: "Weather in Paris?" }] };
    const completions = `${base}/v1/chat/completions`;
    const viaServer = () => post(agent, completions, token, body);
    const viaFloor = () => post(agent, `${floorStarted.match[1]}/v1/chat/completions`, token, body);
    await drive(200, CONCURRENCY, () => inProcess()); // warm-up
    await drive(200, CONCURRENCY, viaServer);
    await drive(200, CONCURRENCY, viaFloor);
    // Interleaved rounds (in-process, served, floor, in-process, …) so that the shared machine's load hits all alike.
    // The CPU each runner spent (this process for the runs in-process, the server's for the others; Linux's /proc).
    const rounds = 4;
    const local = { latencies: [], seconds: 0, cpuMs: 0 };
    const served = { latencies: [], seconds: 0, cpuMs: 0 };
    const floored = { latencies: [], seconds: 0, cpuMs: 0 };
    for (let round = 0; round < rounds; round++) {
      for (const [total, job, runner] of [[local, () => inProcess(), undefined], [served, viaServer, server], [floored, viaFloor, floor]]) {
        const cpuMs = () => (runner ? processCpuMs(runner.pid) : ownCpuMs());
        const before = cpuMs();
        const result = await drive(requests / rounds, CONCURRENCY, job);
        total.cpuMs += cpuMs() - before;
        total.latencies.push(...result.latencies);
        total.seconds += result.seconds;
      }
    }
    const rate = (result) => requests / result.seconds;
    const perRequest = (result) => (Number.isNaN(result.cpuMs) ? "" : `   runner CPU ${(result.cpuMs / requests).toFixed(2)} ms/req`);
    console.log(`\nlllm serve against in-process runs (${requests} requests, ${CONCURRENCY} at once, one tool round each)`);
    console.log(`  in-process (runRecorded)        ${rate(local).toFixed(0).padStart(6)} req/s   median ${percentile(local.latencies, 0.5).toFixed(1)} ms   p99 ${percentile(local.latencies, 0.99).toFixed(1)} ms${perRequest(local)}`);
    console.log(`  lllm serve (chat completions)   ${rate(served).toFixed(0).padStart(6)} req/s   median ${percentile(served.latencies, 0.5).toFixed(1)} ms   p99 ${percentile(served.latencies, 0.99).toFixed(1)} ms${perRequest(served)}`);
    console.log(`  floor: bare node:http + runs    ${rate(floored).toFixed(0).padStart(6)} req/s   median ${percentile(floored.latencies, 0.5).toFixed(1)} ms   p99 ${percentile(floored.latencies, 0.99).toFixed(1)} ms${perRequest(floored)}`);
    console.log(`  throughput ratio                ${(rate(served) / rate(local)).toFixed(2)}x in-process (goal >= 0.9x); the floor ${(rate(floored) / rate(local)).toFixed(2)}x`);
    console.log(`  added latency                   median ${(percentile(served.latencies, 0.5) - percentile(local.latencies, 0.5)).toFixed(1)} ms (goal <= 2), p99 ${(percentile(served.latencies, 0.99) - percentile(local.latencies, 0.99)).toFixed(1)} ms (goal <= 10)`);

    floor.kill("SIGTERM"); // done with: the figures below are lllm serve's alone

    // One request at a time, alternating: the latency the server adds to a request, without queueing.
    const alone = { local: [], served: [] };
    for (let index = 0; index < 300; index++) {
      let begin = performance.now();
      await inProcess();
      alone.local.push(performance.now() - begin);
      begin = performance.now();
      await viaServer();
      alone.served.push(performance.now() - begin);
    }
    console.log(`  added latency, one at a time    median ${(percentile(alone.served, 0.5) - percentile(alone.local, 0.5)).toFixed(1)} ms (in-process ${percentile(alone.local, 0.5).toFixed(1)} ms), p99 ${(percentile(alone.served, 0.99) - percentile(alone.local, 0.99)).toFixed(1)} ms`);

    // Streaming, one at a time: the first content chunk at the client against the in-process run's first delta.
    const streamRuns = 200;
    const localFirst = [];
    for (let index = 0; index < streamRuns; index++) {
      const begin = performance.now();
      let first;
      await inProcess(() => (first ??= performance.now() - begin));
      localFirst.push(first);
    }
    const servedFirst = [];
    for (let index = 0; index < streamRuns; index++) servedFirst.push(await firstChunk(agent, completions, token, { ...body, stream: true }));
    console.log(`  first streamed chunk            in-process median ${percentile(localFirst, 0.5).toFixed(1)} ms, served ${percentile(servedFirst, 0.5).toFixed(1)} ms: +${(percentile(servedFirst, 0.5) - percentile(localFirst, 0.5)).toFixed(1)} ms (goal <= 2)`);

    // Memory: a fresh server's RSS after 1,000 requests and after 10,000. RSS swings by tens of MiB with the garbage
    // collector's cycles under load (30,000 requests in a row read anywhere from 145 to 222 MiB, with no trend), so
    // each figure is read from samples taken every 20 ms over the 500 requests before the mark: their median, and
    // their floor (the lowest, just after a collection), which is what a leak raises. The live heap after V8's last
    // full collection before each mark is printed too.
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
    const fresh = await startServer();
    server = fresh.child;
    const freshCompletions = `${fresh.base}/v1/chat/completions`;
    const load = (count) => drive(count, CONCURRENCY, () => post(agent, freshCompletions, token, body));
    const window = 500;
    const sampled = async (count) => {
      await load(count - window);
      const samples = [];
      const timer = setInterval(() => samples.push(rssMib(server.pid)), 20);
      await load(window);
      clearInterval(timer);
      samples.push(rssMib(server.pid));
      return { median: percentile(samples, 0.5), low: Math.min(...samples), high: Math.max(...samples) };
    };
    const at1k = await sampled(1000);
    const heapAt1k = liveHeap;
    const at10k = await sampled(9000);
    const heapAt10k = liveHeap;
    const range = (figure) => `${figure.median.toFixed(1)} MiB (${figure.low.toFixed(0)}-${figure.high.toFixed(0)})`;
    const plus = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} MiB`;
    console.log(`  server RSS, median (range)      ${range(at1k)} after 1,000 requests, ${range(at10k)} after 10,000: ${plus(at10k.median - at1k.median)}`);
    console.log(`  server RSS, floor               ${at1k.low.toFixed(1)} MiB after 1,000, ${at10k.low.toFixed(1)} MiB after 10,000: ${plus(at10k.low - at1k.low)} (goal <= 20)`);
    const heap = (value) => (value === undefined ? "n/a" : `${value.toFixed(1)} MB`);
    console.log(`  server heap after a full GC     ${heap(heapAt1k)} at 1,000 requests, ${heap(heapAt10k)} at 10,000`);
    agent.destroy();
  } finally {
    floor?.kill("SIGTERM");
    server?.kill("SIGTERM");
    if (server) await new Promise((resolve) => server.once("exit", resolve));
    mock.stdin.end();
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const requests = args.includes("--requests") ? Number(args[args.indexOf("--requests") + 1]) : 2000;
  await serveSuite({ root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."), requests });
}
