#!/usr/bin/env node
// `npm run build` (and `prepare`, which every `npm install` of the clone or of a path to it runs). It builds into a
// folder of its own beside dist/ and swaps it in with two renames, so a CLI started during the build finds the old
// dist/ or the new one, whole, never an empty or half-written one (the build used to start by deleting dist/: for
// the ~40 s of a build every global `lllm` failed with "Cannot find module"). And it builds only when dist/ is not
// current: dist/build-stamp.json holds a hash of every input, so a consumer's `npm install` or `npm test` with
// nothing changed costs a second. `--force` builds anyway.
//
// A CLI that was already running when the swap happened goes on loading its lazy chunks by their paths under
// dist/: the new build carries over the previous build's bundle files it lacks (their names are content hashes,
// so a carried file is exactly what the running CLI expects), for one generation.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const STAMP = "build-stamp.json";
/** What the build reads: a change to any of these makes dist/ stale (the lock file: the dependencies bundled). */
const INPUT_FOLDERS = ["src", "schemas", "scripts"];
const INPUT_FILES = ["package-lock.json", "tsconfig.json", "tsconfig.build.json"];
/** Written by the build itself into src/ (for the tests): an output, not an input. */
const GENERATED = path.join("src", "config", "generated");
const VALIDATORS = path.join("config", "generated", "validators");

const force = process.argv.includes("--force");

if (!existsSync(path.join(root, "src"))) {
  // An installed copy (a tarball) ships dist/ built, without its sources.
  if (existsSync(path.join(dist, "bundle", "cli.js"))) process.exit(0);
  fail("there is no src/ folder to build dist/ from");
}

const inputs = inputsHash();
const current = readStamp(dist);
if (!force && current?.inputs === inputs) {
  restoreGeneratedValidators();
  process.stderr.write("lllm: dist/ is up to date with the sources (`npm run build -- --force` rebuilds it)\n");
  process.exit(0);
}

removeLeftovers();
const staging = path.join(root, `dist.tmp-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
try {
  run(createRequire(import.meta.url).resolve("typescript/bin/tsc"), ["-p", "tsconfig.build.json", "--outDir", staging]);
  for (const script of ["copy-assets.js", "build-validators.js", "bundle.js"]) run(path.join(root, "scripts", script), ["--out", staging]);
  const own = readdirSync(path.join(staging, "bundle"));
  const carried = carryOver(current, own);
  writeFileSync(path.join(staging, STAMP), `${JSON.stringify({ inputs, bundle: own, carried }, null, 2)}\n`);
  swapIn(staging);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  fail(error instanceof Error ? error.message : String(error));
}

/** A hash of every input file's path and content. */
function inputsHash() {
  const hash = createHash("sha256");
  const files = INPUT_FILES.filter((file) => existsSync(path.join(root, file)));
  for (const folder of INPUT_FOLDERS) if (existsSync(path.join(root, folder))) files.push(...filesUnder(folder));
  for (const file of files.sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** Files under `folder` (relative to the root), the generated ones left out. */
function filesUnder(folder) {
  const found = [];
  for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
    const relative = path.join(folder, entry.name);
    if (relative === GENERATED) continue;
    if (entry.isDirectory()) found.push(...filesUnder(relative));
    else if (entry.isFile()) found.push(relative);
  }
  return found;
}

function readStamp(folder) {
  try {
    return JSON.parse(readFileSync(path.join(folder, STAMP), "utf8"));
  } catch {
    return undefined;
  }
}

/** The tests read the validators from src/ (git ignores them there): put them back if they were removed. */
function restoreGeneratedValidators() {
  const target = path.join(root, GENERATED, "validators");
  if (existsSync(target) || !existsSync(path.join(dist, VALIDATORS))) return;
  const partial = `${target}.tmp-${process.pid}`;
  mkdirSync(partial, { recursive: true });
  for (const name of readdirSync(path.join(dist, VALIDATORS))) copyFileSync(path.join(dist, VALIDATORS, name), path.join(partial, name));
  renameSync(partial, target);
}

/** Folders of builds that died half-way (their process is gone). */
function removeLeftovers() {
  for (const name of readdirSync(root)) {
    const match = /^dist\.(?:tmp|old)-(\d+)$/.exec(name);
    if (match && !alive(Number(match[1]))) rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

function run(script, args) {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`${path.relative(root, script)} failed${result.signal ? ` (${result.signal})` : ` (exit ${result.status})`}`);
}

/**
 * The previous build's own bundle files that this one lacks, copied in (before the swap, so that a CLI running the
 * previous build never misses one). Only one generation: what the previous build had carried is not carried again.
 */
function carryOver(previous, own) {
  if (!Array.isArray(previous?.bundle)) return [];
  const mine = new Set(own);
  const carried = [];
  for (const name of previous.bundle) {
    if (typeof name !== "string" || mine.has(name) || name.includes("/") || name.includes("\\")) continue;
    const source = path.join(dist, "bundle", name);
    if (!existsSync(source)) continue;
    copyFileSync(source, path.join(staging, "bundle", name));
    carried.push(name);
  }
  return carried;
}

/**
 * dist/ becomes `folder`: the old one is renamed aside, the new one renamed in (a rename cannot replace a folder
 * that has files), and the old one removed. Between the two renames dist/ is missing for a moment: bin/lllm.js
 * retries its import then. Another build that swapped in meanwhile makes the rename fail: try again.
 */
function swapIn(folder) {
  const aside = path.join(root, `dist.old-${process.pid}`);
  for (let attempt = 0; ; attempt += 1) {
    rmSync(aside, { recursive: true, force: true });
    let moved = false;
    try {
      if (existsSync(dist) && statSync(dist).isDirectory()) {
        renameSync(dist, aside);
        moved = true;
      }
    } catch (error) {
      if (error.code !== "ENOENT") throw error; // another build moved it first
    }
    try {
      renameSync(folder, dist);
      rmSync(aside, { recursive: true, force: true });
      return;
    } catch (error) {
      const raced = error.code === "ENOTEMPTY" || error.code === "EEXIST";
      if (!raced || attempt >= 10) {
        // Never leave dist/ missing: the old one goes back.
        if (moved && !existsSync(dist)) renameSync(aside, dist);
        throw error;
      }
    }
  }
}

function fail(message) {
  process.stderr.write(`lllm: the build failed: ${message}\n`);
  process.exit(1);
}
