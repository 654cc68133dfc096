// Issue 33's numbers: `lllm run` of a tactic using five installed remote packages against the same tactic with the
// packages as local folders (integrity is checked at install and when a cached file's stamp changes, not hashed on
// every run), and `lllm install --frozen` of 20 cached packages (nothing to fetch: the lock and the cache agree).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function time(lllm, args, { cwd, home }) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [lllm, ...args], { cwd, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1", LLLM_HOME: home } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`lllm ${args.join(" ")} failed in ${cwd}: ${result.stderr}`);
  return ms;
}

/** A package folder with a TypeScript tool and a prompt (code the registry imports on each run, as real ones have). */
function writePackage(dir, name) {
  mkdirSync(path.join(dir, "tools"), { recursive: true });
  mkdirSync(path.join(dir, "prompts"), { recursive: true });
  writeFileSync(path.join(dir, "lllm.toml"), `[package]\nname = "${name}"\nversion = "1.0.0"\n`);
  writeFileSync(path.join(dir, "prompts", "system.md"), `You are ${name}.`);
  writeFileSync(path.join(dir, "tools", `${name}.ts`), `export default { name: "${name}_tool", description: "A tool of ${name}.", parameters: { type: "object", properties: {} }, run: () => "${name}" };\n`);
}

export async function packagesSuite({ root, runs }) {
  const lllm = path.join(root, "bin", "lllm.js");
  const work = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-packages-"));
  try {
    const home = path.join(work, "home");
    const authors = path.join(work, "authors");
    const names = Array.from({ length: 20 }, (_, index) => `pkg${index + 1}`);
    for (const name of names) {
      writePackage(path.join(authors, name), name);
      time(lllm, ["pack", "--out", path.join(work, `${name}.tgz`)], { cwd: path.join(authors, name), home });
    }
    const five = names.slice(0, 5);
    const tactic = (packages) =>
      [`name: bench`, `prompt: "{input}"`, ...(packages ? [`packages: [${packages.join(", ")}]`] : []), "global:", `  tools: [${five.map((name) => `${name}.tools:${name}_tool`).join(", ")}]`, "agent_configs:", "  - name: a", "    system_prompt_path: pkg1.prompts:system", ""].join("\n");
    // The same tactic twice: once over the folders, once over the same packages installed from tarballs.
    const local = path.join(work, "local");
    mkdirSync(local);
    writeFileSync(path.join(local, "tactic.yaml"), tactic(five.map((name) => path.join(authors, name))));
    writeFileSync(path.join(local, "script.yaml"), "- text: done\n");
    const installed = path.join(work, "installed");
    mkdirSync(installed);
    writeFileSync(path.join(installed, "lllm.toml"), `[package]\nname = "bench"\n\n[dependencies]\npackages = [${five.map((name) => `"../${name}.tgz"`).join(", ")}]\n`);
    writeFileSync(path.join(installed, "tactic.yaml"), tactic(undefined));
    writeFileSync(path.join(installed, "script.yaml"), "- text: done\n");
    time(lllm, ["install", "--trust"], { cwd: installed, home });
    const twenty = path.join(work, "twenty");
    mkdirSync(twenty);
    writeFileSync(path.join(twenty, "lllm.toml"), `[package]\nname = "twenty"\n\n[dependencies]\npackages = [${names.map((name) => `"../${name}.tgz"`).join(", ")}]\n`);
    time(lllm, ["install", "--trust"], { cwd: twenty, home });

    const run = ["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--no-log"];
    const samples = { local: [], installed: [], frozen: [], version: [] };
    for (let round = 0; round < runs + 1; round++) {
      const local_ = time(lllm, run, { cwd: local, home });
      const installed_ = time(lllm, run, { cwd: installed, home });
      const frozen = time(lllm, ["install", "--frozen"], { cwd: twenty, home });
      const version = time(lllm, ["--version"], { cwd: twenty, home });
      if (round === 0) continue; // the first round warms the transpile cache and the OS
      samples.local.push(local_);
      samples.installed.push(installed_);
      samples.frozen.push(frozen);
      samples.version.push(version);
    }
    const base = median(samples.local);
    console.log(`\nPackages: a run over five installed remote packages, and install --frozen (median of ${runs} runs)`);
    console.log(`  lllm run, 5 local package folders   ${base.toFixed(1).padStart(8)} ms   1.00x baseline`);
    console.log(`  lllm run, 5 installed packages      ${median(samples.installed).toFixed(1).padStart(8)} ms   ${(median(samples.installed) / base).toFixed(2)}x baseline (target: within 1.10x)`);
    const version = median(samples.version);
    console.log(`  lllm --version                      ${version.toFixed(1).padStart(8)} ms   1.00x (second baseline)`);
    console.log(`  lllm install --frozen, 20 cached    ${median(samples.frozen).toFixed(1).padStart(8)} ms   ${(median(samples.frozen) / version).toFixed(2)}x lllm --version (target: under 1 s)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
