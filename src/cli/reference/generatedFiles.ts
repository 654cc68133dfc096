import { readFileSync } from "node:fs";
import path from "node:path";
import { settingsSchema } from "../../config/settingsSchema.js";
import { proxySchema } from "../../proxies/proxySchema.js";
import { buildProgram } from "../main.js";
import { cliReference } from "./cliReference.js";
import { errorCodeReference } from "./errorCodeReference.js";
import { schemaReference } from "./schemaReference.js";

/** A file `npm run docs` writes: its path from the repository's root, and its text. */
export interface GeneratedFile {
  path: string;
  text: string;
}

type Schema = Record<string, unknown>;

const schemaFile = (kind: string): Schema => JSON.parse(readFileSync(new URL(`../../../schemas/${kind}.schema.json`, import.meta.url), "utf8")) as Schema;

/**
 * Every file `npm run docs` writes, made from the code: the CLI reference from the commander definitions, the
 * keys of each file format from its JSON Schema, the error codes from errorCodes.ts, and the proxy file's schema
 * for editors (built by code, src/proxies/proxySchema.ts, like the validator). The same text on every machine (no
 * date, no path of this machine), so that a test can tell a file that is not current.
 */
export function generatedFiles(): GeneratedFile[] {
  const proxy = proxySchema("yaml") as Schema;
  const keys = (name: string, source: string, schema: Schema, title: string, intro: string): GeneratedFile => ({
    path: `docs/reference/${name}.md`,
    text: schemaReference({ title, intro, schema, source }),
  });
  return [
    { path: "docs/reference/cli.md", text: cliReference(buildProgram()) },
    keys("tactic-file", "schemas/tactic.schema.json", schemaFile("tactic"), "Tactic file keys", "Every key of a tactic file (`*.yaml`, `*.json`). How to write one: [Tactic files](../tactics.md). Editors check and complete the file with the schema (`lllm schema tactic`)."),
    keys("package-manifest", "schemas/package.schema.json", schemaFile("package"), "Package manifest keys", "Every key of a package manifest: `lllm.toml`, `lllm.yaml`, or the `lllm` key of package.json. How packages work: [Packages and tools](../packages.md)."),
    keys("proxy-file", "src/proxies/proxySchema.ts", proxy, "Proxy file keys", "Every key of a declarative proxy (`proxies/*.yaml` in a package; `proxy({…})` in code takes the same keys in camelCase). How proxies work: [Proxies](../proxies.md)."),
    keys("settings", "src/config/settingsSchema.ts", settingsSchema() as Schema, "Project settings keys", "Every key of the project settings (`.lllmrc`, `.lllmrc.{json,yaml,yml}`, `lllm.config.{json,yaml,js,mjs}` or the `lllm` key of package.json), found walking up from the current folder: see [Tactic files](../tactics.md#project-settings)."),
    keys("test-file", "schemas/test.schema.json", schemaFile("test"), "Test file keys", "Every key of a test file (`*.test.yaml`, `*.test.json`) of `lllm test`. How to test agents: [Testing agents](../testing.md)."),
    { path: "docs/reference/error-codes.md", text: errorCodeReference() },
    { path: "schemas/proxy.schema.json", text: `${JSON.stringify(proxy, null, 2)}\n` },
  ];
}

/** A generated file that is not what `npm run docs` writes, and what is wrong with it. */
export interface StaleFile {
  path: string;
  problem: string;
}

/** The generated files under `root` (a clone of lllm) that are missing or differ from what the code makes now. */
export function staleGeneratedFiles(root: string, files = generatedFiles()): StaleFile[] {
  const stale: StaleFile[] = [];
  for (const file of files) {
    let current: string;
    try {
      current = readFileSync(path.join(root, file.path), "utf8");
    } catch {
      stale.push({ path: file.path, problem: `${file.path} is missing` });
      continue;
    }
    if (current === file.text) continue;
    const have = current.split("\n");
    const want = file.text.split("\n");
    const line = want.findIndex((text, index) => text !== have[index]);
    const at = line === -1 ? want.length : line;
    stale.push({ path: file.path, problem: `${file.path} differs from what the code makes, from line ${at + 1}:\n  in the file: ${JSON.stringify(have[at] ?? "(end of file)").slice(0, 200)}\n  generated:   ${JSON.stringify(want[at] ?? "(end of file)").slice(0, 200)}` });
  }
  return stale;
}
