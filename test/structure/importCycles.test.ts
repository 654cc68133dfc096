import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/runCli.js";
import { cyclicGroups, folderGraph, importGraph } from "./importGraph.js";

// ARCHITECTURE.md: "No import cycles", and folders import only downwards. Checked over every relative import of
// src/ (static, `import type`, `export … from` and `await import(…)`: a cycle hidden behind a dynamic import is
// still a cycle), like `madge --circular`.
const SRC = path.join(ROOT, "src");
const graph = importGraph(SRC);

describe("the import graph of src/", () => {
  it("has no cycle between files", () => {
    expect(graph.size).toBeGreaterThan(100); // the scan found the sources, so an empty graph cannot pass
    expect(cyclicGroups(graph).map((group) => group.map((file) => path.relative(SRC, file)))).toEqual([]);
  });

  it("has folders that import only downwards", () => {
    const folders = folderGraph(graph, SRC);
    const edges = [...folders].flatMap(([from, targets]) => targets.map((to) => `${from} -> ${to}`));
    expect(edges.length).toBeGreaterThan(20);
    // Upward imports that once made folder cycles, and the rules ARCHITECTURE.md states.
    const forbidden = ["codeaction -> tactics", "config -> registry", "providers -> testing", "sandbox -> providers", ...[...folders.keys()].map((from) => `${from} -> cli`)];
    expect(edges.filter((edge) => forbidden.includes(edge))).toEqual([]);
  });
});
