// `npm run docs`: write the generated reference pages under docs/reference/ (the CLI, the file formats' keys, the
// error codes) and schemas/proxy.schema.json from the code they document. `--check` writes nothing and exits 1
// when a file is not current. test/docs/generatedFiles.test.ts runs the same check.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles, staleGeneratedFiles } from "../src/cli/reference/generatedFiles.js";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const stale = staleGeneratedFiles(root);
if (process.argv.includes("--check")) {
  if (stale.length > 0) {
    process.stderr.write(`${stale.map((file) => file.problem).join("\n")}\nRun \`npm run docs\` to regenerate them, and commit the result.\n`);
    process.exitCode = 1;
  } else process.stdout.write("the generated files are current\n");
} else {
  const texts = new Map(generatedFiles().map((file) => [file.path, file.text]));
  for (const file of stale) {
    mkdirSync(path.dirname(path.join(root, file.path)), { recursive: true });
    writeFileSync(path.join(root, file.path), texts.get(file.path)!);
    process.stdout.write(`wrote ${file.path}\n`);
  }
  if (stale.length === 0) process.stdout.write("the generated files are current\n");
}
