// The cold-start table of issue 12: lllm against bare baselines, measured side by side in one run (cases
// interleaved, medians). The tool-round cases run `lllm run` and a bare `openai` SDK script (bareOpenAI.mjs)
// against the same mock server of lllm/testing, which asks for as many tool rounds as the model name says.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Run a command to its end without blocking this process's event loop (the mock server lives here). */
function run(command, args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (status !== 0) reject(new Error(`${command} ${args.join(" ")} exited ${status}: ${stderr}`));
      else resolve({ ms, stderr });
    });
  });
}

/** The file `import "lllm"` loads: the package's "." export (older builds: dist/index.js). */
function publicEntry(root) {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  return pkg.exports?.["."]?.import ?? pkg.main ?? "dist/index.js";
}

/**
 * Print the table. `root` is the lllm checkout to measure (its bin/ and dist/): pass another one (`--root`) to
 * measure an older build with the same bench.
 */
export async function coldStartSuite({ root, benchRoot, runs }) {
  const { startMockOpenAIServer } = await import(pathToFileURL(path.join(root, "dist", "testing", "index.js")).href);
  // Stateless, so runs may overlap: the number of tool results so far says whether to ask for another round.
  const server = await startMockOpenAIServer({
    handler: (body) => {
      const rounds = Number(/(\d+)$/.exec(String(body.model))?.[1] ?? 1);
      const done = (body.messages ?? []).filter((message) => message.role === "tool").length;
      return done < rounds ? { tool_calls: [{ name: "get_weather", arguments: { city: `City${done}` } }] } : "Sunny everywhere.";
    },
  });
  const env = { ...process.env, NO_COLOR: "1", OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench", LLLM_HOME: path.join(root, ".bench-home") };
  const node = process.execPath;
  const lllm = path.join(root, "bin", "lllm.js");
  const tactic = path.join(benchRoot, "bench", "fixtures", "rounds.yaml");
  const bare = path.join(benchRoot, "bench", "bareOpenAI.mjs");
  const example = path.join(root, "packages-example", "weather", "tactics", "weather.yaml");
  const lllmRun = (rounds) => [lllm, "run", tactic, "--model", `bench-${rounds}`, "--no-stream", "--input", "Weather?"];
  const importOf = (url) => ["--input-type=module", "-e", `await import(${JSON.stringify(url)})`];
  const cases = {
    node: [node, ["-e", "0"]],
    version: [node, [lllm, "--version"]],
    validate: [node, [lllm, "validate", example]],
    run1: [node, lllmRun(1)],
    bare1: [node, [bare, "bench-1"]],
    run100: [node, lllmRun(100)],
    // The same run without the run store (LLLM_LOG=0): how much of the difference is the store (libsql).
    run100NoLog: [node, lllmRun(100), { LLLM_LOG: "0" }],
    bare100: [node, [bare, "bench-100"]],
    importLllm: [node, importOf(pathToFileURL(path.join(root, publicEntry(root))).href)],
    importOpenai: [node, importOf(import.meta.resolve("openai"))],
  };
  // Every case runs with report-rss.mjs: wall time, CPU time and peak RSS of the same runs. On a busy machine the
  // CPU time (user + system) is the steadier measure of start-up work; both are printed.
  const report = path.join(benchRoot, "bench", "report-rss.mjs");
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, { wall: [], cpu: [], rss: [] }]));
  try {
    for (let round = 0; round < runs + 1; round++) {
      for (const [name, [command, args, extra]] of Object.entries(cases)) {
        const { ms, stderr } = await run(command, ["--import", report, ...args], { cwd: root, env: { ...env, ...extra } });
        if (round === 0) continue; // the first round warms caches (jiti's transpile cache, validators, the OS)
        samples[name].wall.push(ms);
        samples[name].cpu.push(Number(/cpu_us=(\d+)/.exec(stderr)?.[1]) / 1000);
        samples[name].rss.push(Number(/maxrss_kib=(\d+)/.exec(stderr)?.[1]) / 1024);
      }
    }
    const m = (name, measure) => median(samples[name][measure]);
    const row = (measure, a, b, target) => {
      const wall = `${m(a, "wall").toFixed(0).padStart(5)} vs ${m(b, "wall").toFixed(0).padStart(5)} ms ${(m(a, "wall") / m(b, "wall")).toFixed(2).padStart(5)}x`;
      const cpu = `${m(a, "cpu").toFixed(0).padStart(5)} vs ${m(b, "cpu").toFixed(0).padStart(5)} ms ${(m(a, "cpu") / m(b, "cpu")).toFixed(2).padStart(5)}x`;
      console.log(`  ${measure.padEnd(46)} ${wall}   ${cpu}   (target ${target})`);
    };
    console.log(`\nCold start and footprint (issue 12), medians of ${runs} runs, side by side`);
    console.log(`  ${"".padEnd(46)} ${"wall time".padEnd(25)}   ${"CPU time (user + system)".padEnd(25)}`);
    row("lllm --version vs node -e 0", "version", "node", "<= 1.2x");
    row("lllm validate <weather example> vs node -e 0", "validate", "node", "<= 2.5x");
    row("lllm run, 1 tool round vs bare openai script", "run1", "bare1", "<= 1.2x");
    row("lllm run, 100 tool rounds vs bare openai script", "run100", "bare100", "<= 1.1x");
    row('import "lllm" vs import "openai"', "importLllm", "importOpenai", "<= 1.5x");
    row("  the same without the run store (LLLM_LOG=0)", "run100NoLog", "bare100", "-");
    const rss = (name, label, target) => {
      const delta = m(name, "rss") - m("bare100", "rss");
      console.log(`  ${label.padEnd(46)} ${m(name, "rss").toFixed(0).padStart(5)} vs ${m("bare100", "rss").toFixed(0).padStart(5)} MiB ${delta >= 0 ? "+" : ""}${delta.toFixed(0)} MiB (target ${target})`);
    };
    rss("run100", "peak RSS, 100 rounds: lllm run vs bare script", "<= +10 MiB");
    rss("run100NoLog", "  the same without the run store", "-");
  } finally {
    await server.close();
  }
}
