import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";

/** Relative imports of every .ts file under `root` (static, `export … from`, `import type` and `await import(…)`), resolved to files. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of listTs(root)) {
    const text = readFileSync(file, "utf8");
    const targets = new Set<string>();
    const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
    for (const match of text.matchAll(pattern)) {
      const resolved = resolveImport(file, match[1]!);
      if (resolved) targets.add(resolved);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listTs(full);
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [base.replace(/\.(c|m)?js$/, (ext) => ext.replace("js", "ts")), `${base}.ts`, path.join(base, "index.ts")];
  return candidates.find((candidate) => candidate.endsWith("ts") && existsSync(candidate));
}

/** Strongly connected groups of more than one node (or a node importing itself): each holds at least one cycle. */
export function cyclicGroups(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups;
}

/** The graph between folders of `root` (an edge when a file of one imports a file of another). */
export function folderGraph(graph: Map<string, string[]>, root: string): Map<string, string[]> {
  // A file at the top (errors.ts, index.ts) is a node of its own: index.ts re-exports every folder.
  const folderOf = (file: string): string => path.relative(root, file).split(path.sep)[0]!;
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
    folders.set(from, set);
  }
  return new Map([...folders].map(([folder, set]) => [folder, [...set]]));
}
