// `lllm serve --queue` with `lllm worker`s against `lllm serve` alone, in one run (ratios, never absolute timings in
// tests), on this machine with a private redis-server: throughput with one worker against no queue (mock model at
// 20 ms a call, 32 clients, one tool round: two model calls a request); two workers against one when the model's
// latency dominates (200 ms a call, each worker 8 requests at once); and how long the first streamed chunk takes from
// the mock model (its send time is in the chunk) to the client, through the queue against without it.
// Usage: node bench/serveQueue.js [--requests N] (or npm run bench -- --only serveQueue).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CLIENTS = 32;

/** The mock model: waits DELAY_MS, then a tool call for a new question or an answer after the tool's result; a
 * streamed answer's first chunk carries the time it was sent (ms since the epoch, sub-millisecond). */
const MOCK = `import { createServer } from "node:http";
const delay = Number(process.env.DELAY_MS ?? 0);
const now = () => performance.timeOrigin + performance.now();
const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => setTimeout(() => {
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const last = body.messages[body.messages.length - 1];
    const call = last.role !== "tool";
    const message = call ? { role: "assistant", content: null, tool_calls: [{ id: "call_" + Math.random().toString(36).slice(2), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] } : { role: "assistant", content: "It is sunny in Paris." };
    const finish = call ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
    if (!body.stream) {
      const text = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      return response.end(text);
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, reason) => response.write("data: " + JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: reason }] }) + "\\n\\n");
    if (call) chunk({ role: "assistant", tool_calls: message.tool_calls.map((each, index) => ({ index, ...each })) }, null);
    else { chunk({ role: "assistant", content: "t=" + now().toFixed(3) + " " }, null); chunk({ content: "It is sunny." }, null); }
    chunk({}, finish);
    response.end("data: [DONE]\\n\\n");
  }, delay));
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port + "/v1"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();`;

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

async function stop(child, signal = "SIGTERM") {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await new Promise((resolve) => child.once("exit", resolve));
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** CPU seconds a process has used (user + system). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function drive(total, concurrency, job) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await job();
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
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

/** Milliseconds from the mock sending the first content chunk to this client reading it. */
function chunkDelay(agent, url, token, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    let buffer = "";
    let delay;
    const request = httpRequest(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), authorization: `Bearer ${token}` } }, (response) => {
      response.on("data", (chunk) => {
        buffer += chunk.toString();
        const sent = /t=(\d+\.\d+)/.exec(buffer);
        if (delay === undefined && sent) delay = performance.timeOrigin + performance.now() - Number(sent[1]);
      });
      response.on("end", () => (delay === undefined ? reject(new Error(`no timed chunk: ${buffer}`)) : resolve(delay)));
    });
    request.on("error", reject);
    request.end(text);
  });
}

export async function serveQueueSuite({ root, requests = 1200 }) {
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-queue-"));
  const tactic = path.join(root, "bench", "fixtures", "rounds.yaml");
  const tools = path.join(root, "bench", "fixtures", "bench_tools");
  const lllm = path.join(root, "bin", "lllm.js");
  const token = "bench-token-0123456789";
  const children = [];
  const start = async (args, env, pattern) => {
    const started = await startChild(process.execPath, [lllm, ...args], { env }, pattern);
    children.push(started.child);
    return started;
  };
  const port = await freePort();
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const queue = `redis://127.0.0.1:${port}`;
  const agent = new HttpAgent({ keepAlive: true, maxSockets: CLIENTS });
  const body = { model: "rounds", messages: [{ role: "user", content: "Weather in Paris?" }] };
  const mocks = [];
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const mockAt = async (delay) => {
      const { child, match } = await startChild(process.execPath, ["--input-type=module", "-e", MOCK], { env: { ...process.env, DELAY_MS: String(delay) } }, /(http:\/\/\S+\/v1)/);
      mocks.push(child);
      return match[1];
    };
    const envFor = (mock) => ({ ...process.env, LLLM_HOME: home, OPENAI_API_KEY: "bench", OPENAI_BASE_URL: mock, NO_COLOR: "1", BENCH_TOKEN: token, LLLM_QUEUE_HEARTBEAT_MS: "200" });
    const serveArgs = ["serve", tactic, "--model", "gpt-4o-mini", "--http", "127.0.0.1:0", "--token-env", "BENCH_TOKEN", "--concurrency", "64", "--no-log"];
    const url = (started) => `${started.match[1]}/v1/chat/completions`;
    const worker = (env, concurrency) => start(["worker", "--queue", queue, "-p", tools, "--concurrency", String(concurrency), "--no-log"], env, /serving rounds/);
    const rate = (target, total, clients = CLIENTS) => drive(total, clients, () => post(agent, target, token, body));

    // 1. One worker against no queue, the model at 20 ms a call: interleaved rounds.
    const fast = await mockAt(20);
    const plain = await start(serveArgs, envFor(fast), / at (http:\/\/\S+?)\/v1/);
    const queued = await start([...serveArgs, "--queue", queue], envFor(fast), / at (http:\/\/\S+?)\/v1/);
    const one = await worker(envFor(fast), CLIENTS);
    await rate(url(plain), 200);
    await rate(url(queued), 200);
    const samples = { plain: [], queued: [] };
    const cpu = { plain: 0, server: 0, worker: 0, redis: 0 };
    for (let round = 0; round < 4; round++) {
      let before = cpuSeconds(plain.child.pid);
      samples.plain.push(await rate(url(plain), requests / 4));
      cpu.plain += cpuSeconds(plain.child.pid) - before;
      before = [cpuSeconds(queued.child.pid), cpuSeconds(one.child.pid), cpuSeconds(redis.pid)];
      samples.queued.push(await rate(url(queued), requests / 4));
      cpu.server += cpuSeconds(queued.child.pid) - before[0];
      cpu.worker += cpuSeconds(one.child.pid) - before[1];
      cpu.redis += cpuSeconds(redis.pid) - before[2];
    }
    const plainRate = median(samples.plain);
    const queuedRate = median(samples.queued);
    console.log(`\nlllm serve --queue against lllm serve (${requests} requests, ${CLIENTS} clients, one tool round each, mock model at 20 ms a call)`);
    console.log(`  lllm serve                      ${plainRate.toFixed(0).padStart(6)} req/s`);
    console.log(`  --queue, one worker             ${queuedRate.toFixed(0).padStart(6)} req/s`);
    console.log(`  ratio                           ${(queuedRate / plainRate).toFixed(2)}x (goal >= 0.8x)`);
    const per = (seconds) => `${((seconds * 1000) / requests).toFixed(2)} ms`;
    console.log(`  CPU a request                   lllm serve ${per(cpu.plain)}; --queue: server ${per(cpu.server)}, worker ${per(cpu.worker)}, redis ${per(cpu.redis)}`);

    // 2. The first streamed chunk: from the model's sending it to the client, through the queue and without.
    const streamed = { ...body, stream: true };
    const delays = { plain: [], queued: [] };
    for (let index = 0; index < 200; index++) {
      delays.plain.push(await chunkDelay(agent, url(plain), token, streamed));
      delays.queued.push(await chunkDelay(agent, url(queued), token, streamed));
    }
    console.log(`  first streamed chunk            model to client: ${median(delays.plain).toFixed(2)} ms without the queue, ${median(delays.queued).toFixed(2)} ms through it: +${(median(delays.queued) - median(delays.plain)).toFixed(2)} ms (median; goal <= 5)`);
    await stop(one.child);

    // 3. Two workers against one, the model at 200 ms a call (each worker runs 8 requests at once).
    const slow = await mockAt(200);
    await stop(queued.child);
    const slowServer = await start([...serveArgs, "--queue", queue], envFor(slow), / at (http:\/\/\S+?)\/v1/);
    const first = await worker(envFor(slow), 8);
    const slowTotal = Math.max(96, Math.round(requests / 8));
    await rate(url(slowServer), 32);
    const oneRate = await rate(url(slowServer), slowTotal);
    const second = await worker(envFor(slow), 8);
    await rate(url(slowServer), 32);
    const twoRate = await rate(url(slowServer), slowTotal);
    console.log(`\n--queue with the model at 200 ms a call (${slowTotal} requests, ${CLIENTS} clients, --concurrency 8 a worker)`);
    console.log(`  one worker                      ${oneRate.toFixed(1).padStart(6)} req/s`);
    console.log(`  two workers                     ${twoRate.toFixed(1).padStart(6)} req/s`);
    console.log(`  ratio                           ${(twoRate / oneRate).toFixed(2)}x (goal >= 1.6x)`);
    await stop(first.child);
    await stop(second.child);
  } finally {
    agent.destroy();
    for (const child of children.reverse()) await stop(child);
    for (const mock of mocks) mock.stdin.end();
    redis.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const requests = args.includes("--requests") ? Number(args[args.indexOf("--requests") + 1]) : 1200;
  await serveQueueSuite({ root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."), requests });
}
