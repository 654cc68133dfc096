// `import { x } from "node:crypto"` costs more than it looks: Node makes an ES module facade of the built-in, which
// reads every one of its exports, and so runs every lazy getter it has (node:util's parseArgs and diff, crypto's
// webcrypto, perf_hooks' histograms...). Measured on the builtins of a plain `lllm run` (node:crypto, util, stream,
// perf_hooks, vm, os, fs/promises, ...): 8-9 ms as ES imports against 4-7 ms on Node 20, 12-16 against 6-9 on Node
// 22, 19-25 against 10-15 on Node 24. `process.getBuiltinModule` (Node 20.16+) gives the module object itself, as
// `require` does, with no facade. The bundle's chunks get their builtins so: each `import ... from "node:..."` of a
// chunk's leading import block becomes a `const` on the same line (the source maps stay true).
//
// A `const` is not hoisted as an import binding is: were chunks to import each other in a cycle, one's code could
// run before another's consts were set. A chunk in a static import cycle keeps its ES imports (none is today).

const GET = "process.getBuiltinModule";

/**
 * The chunk's code with its leading builtin imports made `const`s. A namespace import whose `.default` the chunk
 * reads stays as it is: the module object has no `default`.
 */
export function builtinImportsToConsts(code) {
  const lines = code.split("\n");
  // The leading block: blank lines, comments, import statements (one per line, as rolldown writes them).
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    if (line === "" || line.startsWith("//") || line.startsWith("#!")) continue;
    if (!line.startsWith("import ")) break;
    const rewritten = rewriteImport(line, code);
    if (rewritten !== null) lines[index] = rewritten;
  }
  return lines.join("\n");
}

function rewriteImport(line, code) {
  const match = /^import (.+) from "(node:[^"]+)";$/.exec(line);
  if (!match) return null;
  const [, clause, specifier] = match;
  const module = `${GET}(${JSON.stringify(specifier)})`;
  const namespace = /^\* as ([\w$]+)$/.exec(clause);
  if (namespace) {
    // A namespace's `.default` is the module; the module object itself has no `default`: keep such an import.
    if (new RegExp(`(?<![\\w$.])${namespace[1].replace(/\$/g, "\\$")}\\.default\\b`).test(code)) return null;
    return `const ${namespace[1]} = ${module};`;
  }
  const parts = /^(?:([\w$]+))?(?:,?\s*\{([^}]*)\})?$/.exec(clause.trim());
  if (!parts || (!parts[1] && parts[2] === undefined)) return null;
  const [, defaultName, named] = parts;
  const names = (named ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => {
      const [imported, local = imported] = name.split(/\s+as\s+/);
      return { imported, local };
    });
  // `default as x` is the module itself, as a default import is.
  const defaults = [defaultName, ...names.filter((name) => name.imported === "default").map((name) => name.local)].filter(Boolean);
  const pattern = names
    .filter((name) => name.imported !== "default")
    .map(({ imported, local }) => (imported === local ? imported : `${imported}: ${local}`))
    .join(", ");
  const declarations = [];
  const holder = defaults[0];
  declarations.push(holder ? `${holder} = ${module}` : null);
  for (const other of defaults.slice(1)) declarations.push(`${other} = ${holder}`);
  if (pattern) declarations.push(`{ ${pattern} } = ${holder ?? module}`);
  return `const ${declarations.filter(Boolean).join(", ")};`;
}

/** The chunks (file names) that are part of a cycle of static imports among `chunks` ({ fileName, imports }). */
export function chunksInCycles(chunks) {
  const imports = new Map(chunks.map((chunk) => [chunk.fileName, chunk.imports.filter((name) => !name.startsWith("node:"))]));
  const reaches = (from, to, seen = new Set()) => {
    for (const next of imports.get(from) ?? []) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        if (reaches(next, to, seen)) return true;
      }
    }
    return false;
  };
  return new Set(chunks.filter((chunk) => reaches(chunk.fileName, chunk.fileName)).map((chunk) => chunk.fileName));
}
