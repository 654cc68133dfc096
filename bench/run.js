#!/usr/bin/env node
// Benchmarks of lllm, reported as ratios against a baseline measured in the same run (never absolute timings
// in tests: these machines are shared and noisy). Usage: npm run bench [-- --runs N] [-- --only NAME]
// `npm run bench -- --check`: the start-up pairs alone (coldStart.js), exit 1 when a ratio passes its limit.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { compareStarts } from "./startTimes.js";
import { measured, usageOf } from "./measured.js";

const benchRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
// `--root <dir>`: measure another lllm build (its bin/ and dist/) with this bench, e.g. the build before a change.
const root = args.includes("--root") ? path.resolve(args[args.indexOf("--root") + 1]) : benchRoot;
const runs = Number(args[args.indexOf("--runs") + 1]) || 15;
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
const lllm = path.join(root, "bin", "lllm.js");
const example = path.join(root, "packages-example", "weather", "tactics", "weather.yaml");

// Variables that add the same cost to every Node process started here, lllm's and the baselines' alike, pulling every
// ratio toward 1: NODE_EXTRA_CA_CERTS (Node parses the whole file when it starts: ~45 ms on Node 20 for a system
// bundle of 140 certificates, against ~55 ms for all of `node -e 0`) and NODE_OPTIONS (a preloaded module, a flag).
// Left out of every command timed here (the benches talk to local servers only), and said so.
for (const name of ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS"]) {
  if (process.env[name] === undefined) continue;
  console.log(`(${name} is set in this environment: left out of the commands timed, each of which it would slow alike)`);
  delete process.env[name];
}

/**
 * The environment of the commands timed here: the bench's own home (.bench-home, as the start-up suite's), so that
 * its runs and caches stay out of the developer's ~/.lllm and `lllm logs`.
 */
const benchEnv = { ...process.env, NO_COLOR: "1", LLLM_HOME: path.join(root, ".bench-home") };

function timeCommand(command, commandArgs) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: ["ignore", "ignore", "pipe"], env: benchEnv });
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

/** Peak RSS of a node program, from bench/measure.py. */
function peakMemory(commandArgs) {
  const result = spawnSync(...measured(process.execPath, commandArgs), { cwd: root, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"], env: benchEnv });
  const { maxrssKib } = usageOf(result.stderr);
  if (result.status !== 0 || Number.isNaN(maxrssKib)) throw new Error(`failed: ${commandArgs.join(" ")}: ${result.stderr}`);
  return maxrssKib / 1024;
}

/** The loop's own cost per tool round: an agent against a model that answers at once, minus the same work done directly. */
async function loopOverhead() {
  const { Agent, Prompt, tool, FunctionCall } = await import("../dist/index.js");
  const { ScriptedModel } = await import("../dist/testing/index.js");
  const rounds = 100;
  const echo = tool({ name: "echo", description: "Echo", parameters: { n: { type: "integer" } }, run: ({ n }) => `n=${n}` });
  const turns = () => [...Array.from({ length: rounds }, (_, n) => ({ tool_calls: [{ name: "echo", arguments: { n } }] })), "done"];

  const { RunBudget } = await import("../dist/limits/index.js");
  const { PriceTable } = await import("../dist/providers/PriceTable.js");
  /** The loop under every limit of a run (none reached): each model request and tool call is checked and counted. */
  function withLimits(model) {
    const budget = RunBudget.start({ limits: { maxCost: 1000, maxTokens: 1e9, maxToolCalls: 1e6, maxDuration: 3600 }, prices: PriceTable.load() });
    // Priced as a real model, so the worst-case cost of each request is computed.
    const priced = { name: "gpt-4o-mini", generate: (request) => model.generate(request) };
    return { model: budget.guardModel(priced, "bench"), budget, close: () => budget.close() };
  }
  async function viaLoop(limited) {
    const scripted = new ScriptedModel(turns());
    const guarded = limited ? withLimits(scripted) : undefined;
    const model = guarded ? guarded.model : scripted;
    const agent = new Agent({ name: "bench", systemPrompt: new Prompt({ path: "bench/system", prompt: "Bench.", functionList: [echo] }), model, maxInterruptSteps: rounds + 1, ...(guarded ? { budget: guarded.budget } : {}) });
    agent.open("main");
    agent.receive("go");
    const cpu = process.cpuUsage();
    const start = performance.now();
    await agent.respond();
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    guarded?.close();
    if (limited !== undefined) (limited ? limitedCpu : loopCpu).push((used.user + used.system) / 1000);
    return elapsed;
  }
  // CPU time beside wall time: on a busy machine the wall time of a 30 ms run is mostly waiting for a core.
  const loopCpu = [];
  const limitedCpu = [];
  /** The same model calls and tool calls without the loop around them: the baseline. */
  async function direct() {
    const model = new ScriptedModel(turns());
    const start = performance.now();
    const messages = [{ role: "system", content: "Bench." }, { role: "user", content: "go" }];
    for (let n = 0; n <= rounds; n++) {
      const reply = await model.generate({ messages, tools: [echo.toTool()] });
      for (const request of reply.toolCalls) await echo.call(new FunctionCall({ name: request.name, arguments: JSON.parse(request.arguments) }));
    }
    return performance.now() - start;
  }
  const loopTimes = [];
  const limitedTimes = [];
  const directTimes = [];
  for (let run = 0; run < runs + 2; run++) {
    // Interleaved, and the two loops in turns first, so that drift in the machine's load and the garbage one run
    // leaves for the next hit both alike.
    const first = run % 2 === 0;
    const c0 = first ? await viaLoop(true) : 0;
    const a = await viaLoop(false);
    const c = first ? c0 : await viaLoop(true);
    const b = await direct();
    if (run >= 2) {
      loopTimes.push(a);
      limitedTimes.push(c);
      directTimes.push(b);
    }
  }
  const loop = median(loopTimes);
  const limited = median(limitedTimes);
  const base = median(directTimes);
  console.log(`\nTool loop, ${rounds} rounds against a model that answers at once (median of ${runs} runs)`);
  console.log(`  direct model + tool calls (baseline)  ${base.toFixed(1).padStart(8)} ms   ${((base / rounds) * 1000).toFixed(0)} µs/round`);
  console.log(`  Agent.respond() loop                  ${loop.toFixed(1).padStart(8)} ms   ${((loop / rounds) * 1000).toFixed(0)} µs/round   ${(loop / base).toFixed(2)}x baseline`);
  console.log(`  loop overhead per round               ${(((loop - base) / rounds) * 1000).toFixed(0).padStart(8)} µs`);
  console.log(`  the loop under limits (every check)   ${limited.toFixed(1).padStart(8)} ms   ${((limited / rounds) * 1000).toFixed(0)} µs/round   ${(limited / loop).toFixed(3)}x the loop without (CPU time: ${(median(limitedCpu) / median(loopCpu)).toFixed(3)}x)`);
}

/** Kernel start (bwrap and plain) against `python3 -c pass`, and the CALL_API round trip inside one cell. */
async function kernelSuite() {
  const { PythonKernel, detectIsolation } = await import("../dist/sandbox/index.js");
  const { ProxyManager, loadProxies } = await import("../dist/proxies/index.js");
  const { Registry } = await import("../dist/registry/index.js");
  const bwrap = (await detectIsolation()).backend === "bwrap";
  await compareStarts({
    title: "Python kernel start, to the first cell's result",
    runs,
    label: "kernel",
    backends: [{ name: "none", available: true }, { name: "bwrap", available: bwrap }],
    start: async (backend) => {
      const kernel = await PythonKernel.start({ isolation: { backend } });
      await kernel.run("pass");
      await kernel.close();
    },
  });

  const registry = await Registry.load({ packages: [path.join(root, "packages-example", "weather")], discover: false });
  const manager = new ProxyManager({ proxies: await loadProxies(registry), activateProxies: ["weather"], useCache: false });
  const kernel = await PythonKernel.start({
    isolation: { backend: bwrap ? "bwrap" : "none" },
    hostFunctions: { CALL_API: ({ path: callPath, params }) => manager.call(callPath, params ?? {}) },
    prelude: 'import lllm_bridge as _b\ndef CALL_API(path, params=None):\n    return _b.call("CALL_API", {"path": path, "params": params or {}})\n',
    maxOutputChars: 0,
  });
  const output = await kernel.run(
    "import time, statistics\n" +
      "times = []\n" +
      "for i in range(1000):\n" +
      "    t = time.perf_counter()\n" +
      '    CALL_API("weather/current/Tokyo", {})\n' +
      "    times.append(time.perf_counter() - t)\n" +
      "print(statistics.median(times) * 1e6)\n",
  );
  await kernel.close();
  console.log(`\nCALL_API round trip to a local proxy, 1,000 calls in one cell (${bwrap ? "bwrap" : "none"})`);
  console.log(`  median per call                    ${Number(output.trim()).toFixed(0).padStart(8)} µs`);
}

const suites = {
  coldstart: async () => {
    const failures = await (await import("./coldStart.js")).coldStartSuite({ root, benchRoot, runs });
    if (failures.length > 0) {
      console.log(`\nStart-up over its limits:\n${failures.map((failure) => `  ${failure}`).join("\n")}`);
      process.exitCode = 1;
    }
  },
  startup: () =>
    compare("Start-up: the CLI against a bare node process", [
      { name: "node -e 0 (baseline)", command: process.execPath, args: ["-e", "0"] },
      { name: "lllm --version", command: process.execPath, args: [lllm, "--version"] },
      { name: "lllm validate <weather example>", command: process.execPath, args: [lllm, "validate", example] },
    ]),
  loop: loopOverhead,
  kernel: kernelSuite,
  codeaction: async () => (await import("./codeaction.js")).codeActionSuite({ root, runs }),
  store: async () => (await import("./store.js")).storeSuite({ runs, root }),
  resume: async () => (await import("./resume.js")).resumeSuite({ runs, root }),
  viewer: async () => (await import("./viewer.js")).viewerSuite({ runs, root }),
  reader: async () => (await import("./batchReader.js")).batchReaderSuite({ runs }),
  serve: async () => (await import("./serve.js")).serveSuite({ root }),
  packages: async () => (await import("./packages.js")).packagesSuite({ root, runs }),
  serveQueue: async () => (await import("./serveQueue.js")).serveQueueSuite({ root }),
  memory: () => {
    const scripted = "scripted:packages-example/weather/scripted/paris-tokyo.yaml";
    const base = median(Array.from({ length: 5 }, () => peakMemory(["-e", "0"])));
    const run = median(Array.from({ length: 5 }, () => peakMemory([lllm, "run", example, "--model", scripted, "--input", "Paris and Tokyo?"])));
    console.log("\nPeak memory (max RSS, median of 5)");
    console.log(`  node -e 0 (baseline)               ${base.toFixed(1).padStart(8)} MiB   1.00x baseline`);
    console.log(`  lllm run <weather example>         ${run.toFixed(1).padStart(8)} MiB   ${(run / base).toFixed(2)}x baseline`);
  },
};

const check = args.includes("--check");
for (const [name, suite] of Object.entries(suites)) {
  if (check ? name === "coldstart" : !only || only === name) await suite();
}
