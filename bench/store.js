// The run store's cost, each figure against a baseline measured side by side (interleaved, medians):
//  1. the 100-round tool loop in process, recording on against off, and what merging the runs into logs.db then
//     costs the reader (`lllm logs`);
//  2. `lllm batch`, 1,000 one-turn items at concurrency 32 against a mock answering in 20 ms: a bare openai-SDK loop
//     (bench/batchFloor.mjs) against lllm with the store off (`--no-log`) and on (target: at most 1.05x the loop);
//  3. a single `lllm run` (one turn, and 100 tool rounds) against a local mock, `LLLM_LOG=0` against on: wall time,
//     CPU time and peak memory (target: at most 1.05x).
// The machine may be shared: CPU time (user + system) is the steadier figure; every figure is a median.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { leanMockSource } from "./leanMock.mjs";
import { measured, usageOf } from "./measured.js";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export async function storeSuite({ runs, root }) {
  await inProcessLoop({ runs, root });
  await batchSideBySide({ runs, root });
  await wholeRun({ runs, root });
}

/** The tool loop in process with the recorder on and off; then what the reader pays to merge those runs. */
async function inProcessLoop({ runs, root }) {
  const dist = (file) => import(pathToFileURL(path.join(root, "dist", file)).href);
  const { Agent, Prompt, tool } = await dist("index.js");
  const { ScriptedModel } = await dist("testing/index.js");
  const { RunRecorder } = await dist("store/RunRecorder.js");
  // (A build from before the spool, measured with `--root`, has none: its recorder writes logs.db itself.)
  const spool = await dist("store/RunSpool.js").catch(() => undefined);
  const { RunStore } = await dist("store/RunStore.js");
  const { RunTally } = await dist("store/RunTally.js");
  const { PriceTable } = await dist("providers/PriceTable.js");
  const { environmentSecrets, redactorOf } = await dist("util/redact.js");
  const rounds = 100;
  const echo = tool({ name: "echo", description: "Echo", parameters: { n: { type: "integer" } }, run: ({ n }) => `n=${n}` });
  const turns = () => [...Array.from({ length: rounds }, (_, n) => ({ tool_calls: [{ name: "echo", arguments: { n } }] })), "done"];
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-store-"));
  const file = path.join(home, "logs.db");

  async function once(logging) {
    const start = performance.now();
    const recorder = logging
      ? RunRecorder.begin({
          file,
          tally: new RunTally(PriceTable.load()),
          redactor: redactorOf(environmentSecrets(process.env)),
          warn: (message) => {
            throw new Error(message);
          },
          run: { tacticPath: "bench.yaml", tacticName: "bench", configDigest: "-", input: "go", vars: {}, models: ["scripted"], lllmVersion: "bench" },
        })
      : undefined;
    const model = new ScriptedModel(turns());
    const agent = new Agent({ name: "bench", systemPrompt: new Prompt({ path: "bench/system", prompt: "Bench.", functionList: [echo] }), model, maxInterruptSteps: rounds + 1, ...(recorder ? { onEvent: (event) => recorder.onEvent(event) } : {}) });
    agent.open("main");
    agent.receive("go");
    const message = await agent.respond();
    recorder?.finish({ output: message.content });
    return performance.now() - start;
  }

  const on = [];
  const off = [];
  let merge;
  try {
    for (let run = 0; run < runs + 2; run++) {
      const a = await once(false);
      const b = await once(true);
      if (run >= 2) {
        off.push(a);
        on.push(b);
      }
    }
    // The reader's side: the first `lllm logs` after these runs merges them into logs.db (libsql loaded, the file made).
    spool?.RunSpool.of(file).close();
    const start = performance.now();
    const store = RunStore.openSync(file);
    merge = { ms: performance.now() - start, runs: store.listRuns({ limit: 1000 }).length };
    store.close();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const base = median(off);
  const logged = median(on);
  console.log(`\nRun store: the ${rounds}-round tool loop in process, recording off against on (median of ${runs} runs)`);
  console.log(`  recording off (baseline)           ${base.toFixed(1).padStart(8)} ms`);
  console.log(`  recording on (the spool)           ${logged.toFixed(1).padStart(8)} ms   ${(logged / base).toFixed(2)}x baseline`);
  console.log(`  the reader merging those ${merge.runs} runs   ${merge.ms.toFixed(1).padStart(8)} ms   (${(merge.ms / merge.runs).toFixed(1)} ms a ${rounds}-round run, paid once by the next \`lllm logs\`)`);
}

/** Run a node program to its end: wall time, CPU time (user + system) and peak RSS, from bench/measure.py. */
function measure(root, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(...measured(process.execPath, args), { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => {
      const usage = usageOf(stderr);
      if (status !== 0 || Number.isNaN(usage.wallMs)) return reject(new Error(`${args.join(" ")} exited ${status}: ${stderr}`));
      resolve({ ms: usage.wallMs, cpuMs: usage.cpuMs, rssMib: usage.maxrssKib / 1024 });
    });
  });
}

/** One row of a side-by-side table: median wall, CPU and RSS, and the ratio of each run to the baseline's run of the same round. */
function row(name, results, base) {
  const ratio = median(results.map((result, index) => result.ms / base[index].ms));
  const cpuRatio = median(results.map((result, index) => result.cpuMs / base[index].cpuMs));
  return `  ${name.padEnd(30)} ${median(results.map((result) => result.ms)).toFixed(0).padStart(6)} ms ${ratio.toFixed(2)}x   CPU ${median(results.map((result) => result.cpuMs)).toFixed(0).padStart(6)} ms ${cpuRatio.toFixed(2)}x   ${median(results.map((result) => result.rssMib)).toFixed(1).padStart(6)} MiB peak`;
}

/** `lllm batch` with the store on and off against a bare openai-SDK loop making the same calls. */
async function batchSideBySide({ runs, root }) {
  const items = 1000;
  const concurrency = 32;
  const repeat = Math.max(3, Math.min(runs, 5));
  const mock = spawn(process.execPath, ["--input-type=module", "-e", leanMockSource(20)], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise((resolve) => mock.stdout.once("data", (chunk) => resolve(String(chunk).trim())));
  const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-store-batch-"));
  const results = { floor: [], off: [], on: [] };
  try {
    const inputs = path.join(dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: items }, (_, index) => `q${index + 1}`).join("\n"));
    const tactic = path.join(dir, "echo.yaml");
    writeFileSync(tactic, `name: echo\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${url}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
    let count = 0;
    const lllm = async (log) => {
      const home = path.join(dir, `home-${(count += 1)}`);
      try {
        return await measure(root, [path.join(root, "bin", "lllm.js"), "batch", tactic, "--inputs", inputs, "--lines", "--concurrency", String(concurrency), "--out", path.join(dir, `out-${count}.jsonl`), "--quiet", ...(log ? [] : ["--no-log"])], { LLLM_HOME: home, MOCK_KEY: "sk-bench" });
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    };
    const floor = () => measure(root, [path.join(root, "bench", "batchFloor.mjs"), String(items), String(concurrency)], { OPENAI_BASE_URL: url, OPENAI_API_KEY: "sk-bench" });
    await floor(); // warm the OS caches and the mock's connections
    for (let round = 0; round < repeat; round += 1) {
      results.floor.push(await floor());
      results.off.push(await lllm(false));
      results.on.push(await lllm(true));
    }
  } finally {
    mock.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nRun store: lllm batch, ${items} one-turn items at concurrency ${concurrency}, mock answering in 20 ms, against a bare openai-SDK loop (median of ${repeat}; target: store on <= 1.05x)`);
  console.log(row("bare openai loop (baseline)", results.floor, results.floor));
  console.log(row("lllm batch --no-log", results.off, results.floor));
  console.log(row("lllm batch, run store on", results.on, results.floor));
}

/**
 * What a user notices of the store in `lllm run`: one turn, and 100 tool rounds, against a local mock server, with a
 * fresh store each time (as a first run), `LLLM_LOG=0` against logging on, interleaved.
 */
async function wholeRun({ runs, root }) {
  const { startMockOpenAIServer } = await import(pathToFileURL(path.join(root, "dist", "testing", "index.js")).href);
  const server = await startMockOpenAIServer({
    handler: (body) => {
      const done = (body.messages ?? []).filter((message) => message.role === "tool").length;
      const wanted = Number(/^bench-(\d+)$/.exec(body.model ?? "")?.[1] ?? 0);
      return done < wanted ? { tool_calls: [{ name: "get_weather", arguments: { city: `City${done}` } }] } : "Sunny everywhere.";
    },
  });
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-store-run-"));
  const once = (rounds, logging) => {
    // A first run: no logs.db, no spool.
    for (const name of ["logs.db", "logs.db-wal", "logs.db-shm", "logs.spool"]) rmSync(path.join(home, name), { recursive: true, force: true });
    return measure(root, [path.join(root, "bin", "lllm.js"), "run", path.join(root, "bench", "fixtures", "rounds.yaml"), "--model", `bench-${rounds}`, "--no-stream", "--input", "Weather?"], { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench", LLLM_HOME: home, LLLM_LOG: logging ? "1" : "0" });
  };
  try {
    for (const rounds of [0, 100]) {
      const on = [];
      const off = [];
      for (let run = 0; run < runs + 1; run++) {
        const a = await once(rounds, false);
        const b = await once(rounds, true);
        if (run > 0) {
          off.push(a);
          on.push(b);
        }
      }
      console.log(`\nRun store: lllm run, ${rounds === 0 ? "one turn" : `${rounds} tool rounds`} on a local mock server, LLLM_LOG=0 against logging on (median of ${runs}; target <= 1.05x)`);
      console.log(row("logging off (baseline)", off, off));
      console.log(row("logging on", on, off));
    }
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}
