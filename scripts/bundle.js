#!/usr/bin/env node
// Bundle the compiled code (dist/) into a few files in dist/bundle/, which the CLI and `import "lllm"` load.
// Node 20 has no compile cache and pays for every module it resolves and links: `lllm run` loaded about 460 files
// (ours, yaml, openai), `import "lllm"` about 200. Lazy imports stay lazy: each becomes a chunk loaded on first use.
// Kept out of the bundle: native code (libsql), what loads its own files at run time (jiti), and large optional
// parts that load only in their own commands (MCP SDK, OpenTelemetry, BullMQ); dependencies reached through
// `require` are not seen by the bundler: zod, yaml and commander get a one-file copy each in dist/vendor/
// (util/lazyModule.ts `requireVendored`), the rest (ajv's runtime, jiti) load from node_modules as before.
// The per-file build stays beside it: its .d.ts files are the package's types.
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = (file) => path.join(root, "dist", file);
const out = dist("bundle");

/** `dep-<package>` for a module inside node_modules (the innermost package), else null. */
function dependencyOf(id) {
  const names = [...id.matchAll(/[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/g)];
  return names.length ? `dep-${names.at(-1)[1].replace(/^@/, "").replace(/[\\/]/g, "-")}` : null;
}

rmSync(out, { recursive: true, force: true });
rmSync(dist("vendor"), { recursive: true, force: true });
for (const name of ["zod", "yaml", "commander"]) {
  await build({
    input: { [name]: name },
    platform: "node",
    external: [/^node:/],
    output: { dir: dist("vendor"), format: "cjs", exports: "named", entryFileNames: "[name].cjs" },
    logLevel: "warn",
  });
}
await build({
  input: { cli: dist("cli/main.js"), index: dist("index.js"), packageApi: dist("packageApi/index.js"), testing: dist("testing/index.js") },
  platform: "node",
  external: [/^node:/, "libsql", "jiti", /^@modelcontextprotocol\//, /^@opentelemetry\//, "bullmq", "ioredis", "playwright-core"],
  // A dynamic import of a module that is also imported statically stays where it is: said by design, not a problem.
  checks: { ineffectiveDynamicImport: false },
  output: {
    dir: out,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    sourcemap: true,
    // Each dependency in a chunk named after it (dep-openai-….js): it loads when first imported, as from
    // node_modules, and a test can tell which dependencies a command loaded.
    codeSplitting: { groups: [{ debugName: "dependencies", name: (id) => dependencyOf(id), test: /[\\/]node_modules[\\/]/ }] },
  },
  logLevel: "warn",
});
