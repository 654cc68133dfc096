import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/runCli.js";
import { cyclicGroups, folderGraph, importGraph } from "./importGraph.js";

// ARCHITECTURE.md: "No import cycles", and folders import only downwards. Checked over every relative import of
// src/ (static, `import type`, `export … from` and `await import(…)`: a cycle hidden behind a dynamic import is
// still a cycle), by madge between files and by hand between folders (madge has no folder view).
const SRC = path.join(ROOT, "src");
const graph = importGraph(SRC);

/** The part of madge's API used here (the package ships no types). */
interface MadgeResult {
  obj(): Record<string, string[]>;
  circular(): string[][];
}
const madge = createRequire(import.meta.url)("madge") as (root: string, config: { fileExtensions: string[]; tsConfig: string }) => Promise<MadgeResult>;

describe("the import graph of src/", () => {
  it("has no cycle between files (madge --circular --extensions ts)", async () => {
    // madge's TypeScript parser warns about its own use of a deprecated AST field on every `import("…")` type.
    process.noDeprecation = true;
    const result = await madge(SRC, { fileExtensions: ["ts"], tsConfig: path.join(ROOT, "tsconfig.json") });
    // madge resolved the `.js` suffixes to the sources, so an empty cycle list cannot come from an empty graph.
    const files = result.obj();
    expect(Object.keys(files).length).toBeGreaterThan(100);
    expect(files["cli/run.ts"]).toContain("run/runRecorded.ts");
    expect(result.circular()).toEqual([]);
  }, 180_000); // madge parses every file of src/: 15 s on a loaded machine

  it("has no cycle between files (the hand-written scan agrees)", () => {
    expect(graph.size).toBeGreaterThan(100); // the scan found the sources, so an empty graph cannot pass
    expect(cyclicGroups(graph).map((group) => group.map((file) => path.relative(SRC, file)))).toEqual([]);
  });

  it("has no cycle between folders", () => {
    const folders = folderGraph(graph, SRC);
    const edges = [...folders].flatMap(([from, targets]) => targets.map((to) => `${from} -> ${to}`));
    expect(edges.length).toBeGreaterThan(20);
    expect(cyclicGroups(folders)).toEqual([]);
  });

  it("has folders that import only downwards", () => {
    const folders = folderGraph(graph, SRC);
    const edges = [...folders].flatMap(([from, targets]) => targets.map((to) => `${from} -> ${to}`));
    // Upward imports that once made folder cycles, and the rules ARCHITECTURE.md states. The package API (what
    // package files import from "lllm") is served by the registry, so it must not reach back above it.
    const forbidden = ["codeaction -> tactics", "config -> registry", "providers -> testing", "providers -> mcp", "providers -> store", "sandbox -> providers", "proxies -> registry", "packageApi -> tactics", "packageApi -> registry", "limits -> agent", "limits -> tactics", "limits -> store", "approval -> agent", "approval -> codeaction", "agent -> tactics", "agent -> codeaction", ...[...folders.keys()].map((from) => `${from} -> cli`)];
    expect(edges.filter((edge) => forbidden.includes(edge))).toEqual([]);
  });
});
