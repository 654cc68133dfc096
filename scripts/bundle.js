#!/usr/bin/env node
// Bundle the compiled code (dist/) into a few files in dist/bundle/, which the CLI and `import "lllm"` load.
// Node 20 has no compile cache and pays for every module it resolves and links: `lllm run` loaded about 460 files
// (ours, yaml, openai), `import "lllm"` about 200. Lazy imports stay lazy: each becomes a chunk loaded on first use;
// what a command always loads together is one chunk (scripts/startupGroups.js).
// Kept out of the bundle: native code (libsql), what loads its own files at run time (jiti), and large optional
// parts that load only in their own commands (MCP SDK, OpenTelemetry, BullMQ, the A2A SDK); dependencies reached through
// `require` are not seen by the bundler: zod, yaml and commander get a one-file copy each in dist/vendor/
// (util/lazyModule.ts `requireVendored`), the rest (ajv's runtime, jiti) load from node_modules as before.
// The per-file build stays beside it: its .d.ts files are the package's types.
// Every file of the bundle is named after a hash of its content, the entries too (cli.cjs, index.cjs, … are one-line
// facades that require theirs, cli.js, index.js, … ES modules that give their names): a CLI still running an older
// build after a rebuild loads exactly the chunks it was built with (scripts/build.js carries them over). `--out <folder>`: the build's own folder; default dist/.
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { parseSync } from "rolldown/utils";
import { startupGroups } from "./startupGroups.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outIndex = process.argv.indexOf("--out");
const out = outIndex > 0 ? path.resolve(process.argv[outIndex + 1]) : path.join(root, "dist");
const dist = (file) => path.join(out, file);
const bundle = dist("bundle");

/** `dep-<package>` for a module inside node_modules (the innermost package), else null. */
function dependencyOf(id) {
  const names = [...id.matchAll(/[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/g)];
  return names.length ? `dep-${names.at(-1)[1].replace(/^@/, "").replace(/[\\/]/g, "-")}` : null;
}

/**
 * commander requires node:child_process when it loads, for the executable subcommands lllm has none of: with it come
 * net, dgram and their bindings, in every command's start-up. Its one-file copy requires it when it spawns. A
 * commander whose source no longer has the line fails the build here, rather than quietly loading it again.
 */
const commanderSpawnsLazily = {
  name: "lllm:commander-spawns-lazily",
  transform(code, id) {
    if (!/[\\/]commander[\\/]lib[\\/]command\.js$/.test(id)) return null;
    const eager = "const childProcess = require('node:child_process');";
    if (!code.includes(eager)) this.error(`scripts/bundle.js: commander's lib/command.js no longer has \`${eager}\`: update commanderSpawnsLazily`);
    return code.replace(eager, "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };");
  },
};

/**
 * zod's translations of its error messages (`z.locales.fr()`, 40 languages) are a third of its size, and every file
 * that uses zod loaded them; its default, English, is imported on its own. The vendored zod keeps `locales` (and
 * `z.core.locales`) as an object that loads them from their own copy, dist/vendor/zod-locales.cjs, on first use.
 * Their code only formats messages (no state of zod's of its own). A zod whose source no longer exports them so fails
 * the build here.
 */
const ZOD_LOCALES = "\0lllm:zod-locales";
const zodLocalesOnFirstUse = {
  name: "lllm:zod-locales-on-first-use",
  resolveId: (id) => (id === ZOD_LOCALES ? id : null),
  load(id) {
    if (id !== ZOD_LOCALES) return null;
    return `let real;
// Beside this file (dist/vendor/zod.cjs is CommonJS): a path the bundler leaves as it is.
const load = () => (real ??= require(__dirname + "/zod-locales.cjs"));
export const locales = new Proxy(Object.create(null), {
  get: (_target, key) => Reflect.get(load(), key),
  has: (_target, key) => Reflect.has(load(), key),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_target, key) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(load(), key);
    return descriptor ? { ...descriptor, configurable: true } : undefined;
  },
});
`;
  },
  transform(code, id) {
    if (!/[\\/]zod[\\/]v4[\\/](classic[\\/]external|core[\\/]index)\.js$/.test(id)) return null;
    const eager = 'export * as locales from "../locales/index.js";';
    if (!code.includes(eager)) this.error(`scripts/bundle.js: ${id} no longer has \`${eager}\`: update zodLocalesOnFirstUse`);
    return code.replace(eager, `export { locales } from ${JSON.stringify(ZOD_LOCALES)};`);
  },
};

/**
 * Each `import()` left in a chunk (of a package file, a config file, an ES-only dependency) goes through the code
 * cache's chunk (`importModule`, util/codeCache.ts): bin/lllm.js compiles the chunks with V8's cached data, after
 * which Node 20 no longer finds the module loader an `import()` needs ("A dynamic import callback was not
 * specified"); that chunk is loaded by Node itself. Found with the parser, so a string or a comment is left alone.
 */
const IMPORT_MODULE = "$imprt";
const importsThroughCodeCache = {
  name: "lllm:imports-through-code-cache",
  renderChunk(code, chunk) {
    if (chunk.name === "codeCache") return null;
    const starts = [];
    const visit = (node) => {
      if (Array.isArray(node)) for (const item of node) visit(item);
      else if (node !== null && typeof node === "object") {
        if (node.type === "ImportExpression") starts.push(node.start);
        for (const key of Object.keys(node)) if (key !== "parent") visit(node[key]);
      }
    };
    const { program, errors } = parseSync(chunk.fileName, code);
    if (errors.length > 0) this.error(`scripts/bundle.js: cannot parse ${chunk.fileName}: ${errors[0].message}`);
    visit(program);
    if (starts.length === 0) return null;
    if (code.includes(IMPORT_MODULE)) this.error(`scripts/bundle.js: ${chunk.fileName} names ${IMPORT_MODULE} already`);
    // The same length in place (every position the source map gives stays true), the function at the end (hoisted).
    let rewritten = "";
    let last = 0;
    for (const start of starts.sort((a, b) => a - b)) {
      if (code.slice(start, start + 6) !== "import") this.error(`scripts/bundle.js: an import() of ${chunk.fileName} is not written \`import(\``);
      rewritten += code.slice(last, start) + IMPORT_MODULE;
      last = start + 6;
    }
    rewritten += `${code.slice(last)}\nfunction ${IMPORT_MODULE}(specifier) {\n\treturn require("./codeCache.cjs").importModule(specifier);\n}\n`;
    return { code: rewritten, map: null };
  },
};

/**
 * Every start parses what V8 finds no compiled code for, comments included (the documentation comments are a fifth
 * of the bundle's bytes). The bundle keeps license comments only; the sources and their source maps have the rest.
 */
const CODE_COMMENTS = { legal: true, annotation: false, jsdoc: false };

rmSync(bundle, { recursive: true, force: true });
rmSync(dist("vendor"), { recursive: true, force: true });
for (const [name, source] of [["zod", "zod"], ["zod-locales", "zod/v4/locales"], ["yaml", "yaml"], ["commander", "commander"]]) {
  await build({
    input: { [name]: source },
    platform: "node",
    cwd: out,
    external: [/^node:/],
    plugins: name === "commander" ? [commanderSpawnsLazily] : name === "zod" ? [zodLocalesOnFirstUse] : [],
    output: { dir: dist("vendor"), format: "cjs", exports: "named", entryFileNames: "[name].cjs", comments: CODE_COMMENTS, charset: "ascii" },
    logLevel: "warn",
  });
}
// The MCP SDK's server side (scripts/vendor/*.js say what of it): two entries, so that the stdio server does not
// load the HTTP transport; what they share is a chunk of its own, which requireCompiled loads with its cache too.
await build({
  input: { "mcp-server": path.join(root, "scripts", "vendor", "mcp-server.js"), "mcp-server-http": path.join(root, "scripts", "vendor", "mcp-server-http.js") },
  platform: "node",
  cwd: out,
  external: [/^node:/],
  plugins: [zodLocalesOnFirstUse],
  output: { dir: dist("vendor"), format: "cjs", exports: "named", entryFileNames: "[name].cjs", chunkFileNames: "mcp-shared-[hash].cjs", comments: CODE_COMMENTS, charset: "ascii" },
  logLevel: "warn",
});
const { output } = await build({
  // The code cache an entry too: bin/lllm.js and each chunk's `import()` (importsThroughCodeCache, added after the
  // bundler has chosen what each chunk exports) use all of its exports, which nothing else in the bundle imports.
  input: { cli: dist("cli/main.js"), index: dist("index.js"), packageApi: dist("packageApi/index.js"), testing: dist("testing/index.js"), codeCache: dist("util/codeCache.js") },
  platform: "node",
  // Module ids (in the bundle's comments, hence in the chunks' hashes) relative to the build's folder: the same
  // whatever that folder is called, so the same sources give the same file names.
  cwd: out,
  external: [/^node:/, "libsql", "jiti", /^@modelcontextprotocol\//, /^@opentelemetry\//, /^@a2a-js\//, "bullmq", "ioredis", "playwright-core"],
  // A dynamic import of a module that is also imported statically stays where it is: said by design, not a problem.
  checks: { ineffectiveDynamicImport: false },
  plugins: [importsThroughCodeCache],
  // The groups (startupGroups) leave each entry module alone in its chunk: its exports are its own.
  preserveEntrySignatures: "allow-extension",
  // CommonJS, so that lllm's own code cache (src/util/codeCache.ts) holds the bundle: V8 compiles a function when it
  // is first called, and Node keeps no compiled code of an ES module's functions between runs (Node 20 none at all,
  // 22+ its top level only), so every start compiled again the code a run calls (a quarter of the instructions of a
  // 100-round `lllm run`). bin/lllm.js loads the CLI through that cache, and each chunk loads its sibling chunks so
  // too (`./x.cjs`); `import "lllm"` gets the same instances (the ES entries below require these files).
  output: {
    dir: bundle,
    format: "cjs",
    entryFileNames: "[name]-[hash].cjs",
    chunkFileNames: "[name]-[hash].cjs",
    sourcemap: true,
    comments: CODE_COMMENTS,
    // Non-ASCII characters escaped (\u2026 for …): V8 keeps a source with a single one as two bytes a character, and
    // Node decodes it on the slow path. ASCII throughout, every chunk a run loads takes less to read, decode and hold.
    charset: "ascii",
    // Each dependency in a chunk named after it (dep-openai-….js): it loads when first imported, as from
    // node_modules, and a test can tell which dependencies a command loaded.
    // The line splitter of MCP's stdio, in a chunk of its own: left to itself the bundler put it in the MCP client's
    // chunk, which `lllm mcp serve` (the server side, which needs the splitter alone) then loaded, with the SDK's
    // client and a second copy of zod.
    codeSplitting: {
      groups: [
        { debugName: "dependencies", name: (id) => dependencyOf(id), test: /[\\/]node_modules[\\/]/ },
        ...startupGroups(out),
        { name: "LineSplitter", test: /[\\/]mcp[\\/]LineSplitter\.js$/ },
      ],
    },
  },
  logLevel: "warn",
});
// bin/lllm.js loads the code cache's entry (codeCache.cjs, below) first, and the CLI through it.
const codeCacheChunk = output.find((chunk) => chunk.type === "chunk" && chunk.isEntry && chunk.name === "codeCache");
for (const name of ["useCodeCache", "requireCompiled", "importModule"]) {
  if (!codeCacheChunk?.exports.includes(name)) throw new Error(`scripts/bundle.js: the codeCache chunk does not export ${name}, which bin/lllm.js and the chunks need`);
}
// Each entry under a name of its own: `<entry>.cjs` for require() and bin/lllm.js, and `<entry>.js`, an ES module that
// gives its names from that same file (one module instance, whichever way lllm is loaded). The code cache's entry is
// loaded by bin/lllm.js and the chunks alone, with require(): it has no ES module.
for (const chunk of output) {
  if (chunk.type !== "chunk" || !chunk.isEntry) continue;
  writeFileSync(path.join(bundle, `${chunk.name}.cjs`), `module.exports = require("./${chunk.fileName}");\n`);
  if (chunk.name !== "codeCache") writeFileSync(path.join(bundle, `${chunk.name}.js`), esEntry(chunk.fileName, chunk.exports));
}

/** An ES module whose exports are those of the CommonJS entry `file` (`names`, as the bundler lists them). */
function esEntry(file, names) {
  const named = names.filter((name) => name !== "default");
  const lines = [`import { createRequire } from "node:module";`, `const entry = createRequire(import.meta.url)(${JSON.stringify(`./${file}`)});`];
  if (named.length > 0) lines.push(`export const { ${named.join(", ")} } = entry;`);
  if (names.includes("default")) lines.push("export default entry.default;");
  return `${lines.join("\n")}\n`;
}
