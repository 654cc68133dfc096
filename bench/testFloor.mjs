// The floor of bench/test.js: the same replays as `lllm test` makes, called in-process through the library without
// the test layer: for each case a scripted model over the cassette's turns and `runRecorded` (the run store
// included), at most CONCURRENCY at once. Every case's cassette is the same, so the floor reads and parses it once:
// it pays no file reading or parsing per case at all (lllm test reads each case's own file).
// Usage: node bench/testFloor.mjs TACTIC CASSETTE COUNT CONCURRENCY
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [tactic, cassette, count, concurrency] = process.argv.slice(2);
const { prepareTactic, runRecorded } = await import(path.join(root, "dist/bundle/index.js"));
const { ScriptedModel } = await import(path.join(root, "dist/bundle/testing.js"));
const yaml = createRequire(import.meta.url)(path.join(root, "dist/vendor/yaml.cjs"));

const prepared = await prepareTactic(tactic);
const { agents } = yaml.parse(readFileSync(cassette, "utf8"));
let next = 0;
let failed = 0;
const worker = async () => {
  while (next < Number(count)) {
    next += 1;
    const model = new ScriptedModel({ agents });
    const run = await runRecorded(prepared, { input: "What is the weather in Paris?", createModel: (config) => ({ name: config.model_name, generate: (request) => model.generate(request) }), warn: () => {} });
    if (!run.ok) failed += 1;
  }
};
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
if (failed > 0) {
  console.error(`${failed} replays failed`);
  process.exitCode = 1;
}
