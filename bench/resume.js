// Durable runs (`lllm run --resume`), each figure against a baseline measured side by side (interleaved, medians):
//  1. what recording for durability costs: a 100-round `lllm run` against a local mock, logged (the journal: each
//     answer and tool outcome written before the next step) against the same run with `--no-log`
//     (target: at most 1.05x the CPU); and the same with large tool results (30 rounds of ~20 KB each), where what
//     the record writes is mostly those results;
//  2. what resuming costs: `lllm run --resume` of a 100-round run stopped at its last model call (100 rounds
//     replayed, then one live call), against the resume of a run stopped after one round (the command's start-up:
//     reading the run log, one round replayed, one live call): the difference is the CPU the 100 rounds' replay
//     takes to reach the first live call (target: under 100 ms). For scale, against a run that makes that one call
//     from the start (no run log read). Both as the CPU the resume had spent when its first live call reached the
//     model (the issue's figure: read from /proc when the mock server gets that request, every thread of the
//     process counted), and as the CPU of the whole command (its end too: the answer, the record's last lines).
// The machine may be shared: CPU time (user + system) is the steadier figure; every figure is a median.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * The CPU time a process has spent so far, in ms: the sum over its threads of the time each spent on a CPU
 * (/proc/PID/task/TID/schedstat, in ns; Linux), so that it can be read while the process waits for its model.
 */
function cpuSoFar(pid) {
  let ns = 0;
  let threads;
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined; // not Linux, or the process is gone
  }
  for (const thread of threads) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ns / 1e6;
}

/** The process being measured, and the CPU it had spent when its first request reached the mock model. */
let probe;

/**
 * Run lllm to its end under bench/measure.py: wall time and CPU time (user + system, every thread) as the kernel
 * counted them for that process alone, nothing loaded into it; `atFirstCall` from /proc.
 */
function measure(root, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", [path.join(root, "bench", "measure.py"), process.execPath, path.join(root, "bin", "lllm.js"), ...args], { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
    probe = { wrapper: child.pid, atFirstCall: undefined };
    const measured = probe;
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => {
      if (probe === measured) probe = undefined;
      const cpu = /cpu_us=(\d+)/.exec(stderr);
      const wall = /wall_us=(\d+)/.exec(stderr);
      if (status !== 0 || !cpu || !wall) return reject(new Error(`lllm ${args.join(" ")} exited ${status}: ${stderr}`));
      resolve({ ms: Number(wall[1]) / 1000, cpuMs: Number(cpu[1]) / 1000, atFirstCall: measured.atFirstCall });
    });
  });
}

/** The pid of lllm itself: the one child of measure.py (Linux). */
function measuredPid(wrapper) {
  try {
    return Number(readFileSync(`/proc/${wrapper}/task/${wrapper}/children`, "utf8").trim().split(" ")[0]) || undefined;
  } catch {
    return undefined;
  }
}

export async function resumeSuite({ runs, root }) {
  const { startMockOpenAIServer } = await import(pathToFileURL(path.join(root, "dist", "testing", "index.js")).href);
  // `bench-N`: N tool rounds, then the answer. A run is stopped (killed) while the server holds its request `hold`.
  let hold;
  let held;
  const server = await startMockOpenAIServer({
    handler: async (body) => {
      if (probe && probe.atFirstCall === undefined) probe.atFirstCall = cpuSoFar(measuredPid(probe.wrapper));
      const done = (body.messages ?? []).filter((message) => message.role === "tool").length;
      const wanted = Number(/^(?:bench|pages)-(\d+)$/.exec(body.model ?? "")?.[1] ?? 0);
      const pages = String(body.model).startsWith("pages-");
      if (hold !== undefined && done === hold) {
        held?.();
        await new Promise(() => {});
      }
      if (pages) return done < wanted ? { tool_calls: [{ id: `call_${done}`, name: "read_page", arguments: { page: done + 1 } }] } : "Read.";
      return done < wanted ? { tool_calls: [{ id: `call_${done}`, name: "get_weather", arguments: { city: `City${done}` } }] } : "Sunny everywhere.";
    },
  });
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-resume-"));
  const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench", LLLM_HOME: home };
  const tactic = path.join(root, "bench", "fixtures", "rounds.yaml");
  const run = (rounds, extra = []) => ["run", tactic, "--model", `bench-${rounds}`, "--no-stream", "--input", "Weather?", ...extra];
  // Large tool results: 30 rounds of a tool that returns about 20 KB (a page of the manual), 600 KB of dialog at the end.
  const pagesTactic = path.join(root, "bench", "fixtures", "pages.yaml");
  const readPages = (extra = []) => ["run", pagesTactic, "--model", "pages-30", "--no-stream", "--input", "Read the manual.", ...extra];

  /** A run of `rounds` rounds, killed while its last model call waits: what a resume picks up. */
  async function stoppedRun(rounds) {
    hold = rounds;
    const reached = new Promise((resolve) => (held = resolve));
    const child = spawn(process.execPath, [path.join(root, "bin", "lllm.js"), ...run(rounds)], { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: "ignore" });
    await reached;
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));
    hold = undefined;
  }

  try {
    const logged = [];
    const unlogged = [];
    const resumed = [];
    const short = [];
    const fresh = [];
    const pagesUnlogged = [];
    const pagesLogged = [];
    for (let round = 0; round < runs + 1; round += 1) {
      const a = await measure(root, run(100, ["--no-log"]), env);
      const b = await measure(root, run(100), env);
      const pa = await measure(root, readPages(["--no-log"]), env);
      const pb = await measure(root, readPages(), env);
      // The log read once (`lllm logs`), as a user has it: the runs before are in the database, not the resume's to
      // merge (a first read of a new log also makes its file and tables, once).
      await measure(root, ["logs"], env);
      await stoppedRun(100);
      const c = await measure(root, ["run", "--resume", "--no-stream"], env);
      await measure(root, ["logs"], env);
      await stoppedRun(1);
      const e = await measure(root, ["run", "--resume", "--no-stream"], env);
      // The same work as the resume's live part, from the start: one model call, answered at once.
      const d = await measure(root, run(0), env);
      if (round > 0) {
        unlogged.push(a);
        logged.push(b);
        resumed.push(c);
        short.push(e);
        fresh.push(d);
        pagesUnlogged.push(pa);
        pagesLogged.push(pb);
      }
    }
    const ratio = (results, base) => median(results.map((result, index) => result.cpuMs / base[index].cpuMs));
    console.log(`\nDurable runs: a 100-round lllm run on a local mock server, recorded (its journal) against --no-log (median of ${runs}; target <= 1.05x CPU)`);
    console.log(`  --no-log (baseline)            CPU ${median(unlogged.map((result) => result.cpuMs)).toFixed(0).padStart(6)} ms   wall ${median(unlogged.map((result) => result.ms)).toFixed(0).padStart(6)} ms`);
    console.log(`  recorded, with its journal     CPU ${median(logged.map((result) => result.cpuMs)).toFixed(0).padStart(6)} ms   wall ${median(logged.map((result) => result.ms)).toFixed(0).padStart(6)} ms   ${ratio(logged, unlogged).toFixed(3)}x CPU`);
    console.log(`  30 rounds of 20 KB tool results: --no-log CPU ${median(pagesUnlogged.map((result) => result.cpuMs)).toFixed(0)} ms, recorded ${median(pagesLogged.map((result) => result.cpuMs)).toFixed(0)} ms   ${ratio(pagesLogged, pagesUnlogged).toFixed(3)}x CPU`);
    const beyond = median(resumed.map((result, index) => result.cpuMs - short[index].cpuMs));
    const beyondRun = median(resumed.map((result, index) => result.cpuMs - fresh[index].cpuMs));
    const probed = [...resumed, ...short, ...fresh].every((result) => result.atFirstCall !== undefined);
    const atCall = (results) => median(results.map((result) => result.atFirstCall));
    const atCallBeyond = probed ? median(resumed.map((result, index) => result.atFirstCall - short[index].atFirstCall)) : undefined;
    console.log(`\nDurable runs: lllm run --resume of a 100-round run stopped at its last model call (median of ${runs}; target: its first live call within 100 ms of CPU beyond start-up)`);
    console.log(`  ${"".padEnd(38)} ${"CPU at the first live call".padEnd(28)} CPU of the whole command`);
    const row = (label, results, note = "") => console.log(`  ${label.padEnd(38)} ${(probed ? `${atCall(results).toFixed(0).padStart(6)} ms` : "   n/a").padEnd(28)} ${median(results.map((result) => result.cpuMs)).toFixed(0).padStart(6)} ms${note}`);
    row("one model call, from the start", fresh);
    row("resume of a 1-round run (start-up)", short, `   ${ratio(short, fresh).toFixed(2)}x the run`);
    row("resume of a 100-round run", resumed, `   ${ratio(resumed, short).toFixed(2)}x the 1-round resume`);
    console.log(`  ${"100 rounds replayed, beyond start-up".padEnd(38)} ${(atCallBeyond === undefined ? "   n/a (no /proc)" : `${atCallBeyond.toFixed(0).padStart(6)} ms ${atCallBeyond < 100 ? "(target met)" : "(target: < 100)"}`).padEnd(28)} ${beyond.toFixed(0).padStart(6)} ms   (${beyondRun.toFixed(0)} ms beyond a run making the one call: the run log read included)`);
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}
