#!/usr/bin/env node
// tsc compiles only .ts: copy the data files that live beside the code (built-in proxy YAML, Python preludes) into
// dist/ so that `new URL("./x.yaml", import.meta.url)` finds them in both src/ (tests) and dist/ (the CLI).
// `--out <folder>`: the build's own folder (scripts/build.js builds beside dist/ and swaps it in); default dist/.
import { cpSync, existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outIndex = process.argv.indexOf("--out");
const out = outIndex > 0 ? path.resolve(process.argv[outIndex + 1]) : path.join(root, "dist");
const assets = /\.(ya?ml|py|json|md)$/;

function copy(dir) {
  for (const name of readdirSync(dir)) {
    const source = path.join(dir, name);
    if (statSync(source).isDirectory()) copy(source);
    else if (assets.test(name)) cpSync(source, path.join(out, path.relative(path.join(root, "src"), source)));
  }
}

if (existsSync(path.join(root, "src"))) copy(path.join(root, "src"));
