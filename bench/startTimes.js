// Start times of sandboxed Python (kernels, programs) against `python3 -c pass`, measured interleaved in one run.
import { spawnSync } from "node:child_process";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Time `start(backend)` for each backend, interleaved with `python3 -c pass` (the baseline) and the interpreter it
 * resolves to (`python3` may be a version-manager shim, and kernels start the real interpreter), after one warm-up
 * round; print medians and ratios. `backends` lists every backend to report; unavailable ones are `null`.
 */
export async function compareStarts({ title, runs, label, backends, start }) {
  const available = backends.filter((backend) => backend.available).map((backend) => backend.name);
  const realPython = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim();
  const samples = Object.fromEntries(["python", "real", ...available].map((name) => [name, []]));
  for (let run = 0; run < runs + 1; run++) {
    const times = {};
    let begin = performance.now();
    spawnSync("python3", ["-c", "pass"]);
    times.python = performance.now() - begin;
    begin = performance.now();
    spawnSync(realPython, ["-c", "pass"]);
    times.real = performance.now() - begin;
    for (const backend of available) {
      begin = performance.now();
      await start(backend);
      times[backend] = performance.now() - begin;
    }
    if (run === 0) continue; // warm-up
    for (const [name, ms] of Object.entries(times)) samples[name].push(ms);
  }
  const base = median(samples.python);
  const row = (name, value) => `  ${name.padEnd(34)} ${value.toFixed(1).padStart(8)} ms   ${(value / base).toFixed(2)}x baseline`;
  console.log(`\n${title} (median of ${runs})`);
  console.log(row("python3 -c pass (baseline)", base));
  console.log(row("the interpreter itself, -c pass", median(samples.real)));
  for (const { name } of backends) {
    console.log(samples[name] ? row(`${label}, ${name}`, median(samples[name])) : `  ${`${label}, ${name}`.padEnd(34)} (not available here)`);
  }
}
