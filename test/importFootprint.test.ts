import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startMockOpenAIServer } from "../src/testing/index.js";
import { BIN, ROOT, runCli } from "./helpers/runCli.js";
import { tempDir, tempTree } from "./helpers/tempTree.js";

// `import "lllm"` and a plain `lllm run` must stay light: the heavy dependencies load when first used. Checked on the
// built package (dist/) in a fresh node, with a module hook that lists every ES module loaded and, at exit, every
// CommonJS module in the require cache and every module of Node's own it loaded (`process.moduleLoadList`: Node's
// fetch is one, internal/deps/undici/undici).
const dir = tempDir("lllm-footprint-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hooks = path.join(dir, "hooks.mjs");
writeFileSync(hooks, 'import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) {\n  appendFileSync(process.env.LLLM_MODULE_LIST, `${url}\\n`);\n  return next(url, context);\n}\n');
const register = path.join(dir, "register.mjs");
writeFileSync(
  register,
  `import { appendFileSync } from "node:fs";\nimport { createRequire, register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
    'const require = createRequire(import.meta.url);\nprocess.on("exit", () => appendFileSync(process.env.LLLM_MODULE_LIST, [...Object.keys(require.cache), ...process.moduleLoadList].join("\\n") + "\\n"));\n',
);

/** Run `code` as an ES module in a fresh node; returns every module it loaded and what it printed. */
function modulesLoadedBy(code: string, name: string): Promise<{ modules: string[]; stdout: string; stderr: string; code: number | null }> {
  return modulesLoadedByNode(["--input-type=module", "-e", code], name);
}

/** Run node with `args` (and the hook) in a clean environment plus `env`; returns every module it loaded and what it printed. */
function modulesLoadedByNode(args: string[], name: string, env: NodeJS.ProcessEnv = {}): Promise<{ modules: string[]; stdout: string; stderr: string; code: number | null }> {
  const list = path.join(dir, `${name}.txt`);
  writeFileSync(list, "");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", pathToFileURL(register).href, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NO_COLOR: "1", ...env, LLLM_MODULE_LIST: list },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (exit) => resolve({ modules: readFileSync(list, "utf8").split("\n").filter(Boolean), stdout, stderr, code: exit }));
  });
}

// What `import "lllm"` loads: the package's "." export (the bundle in dist/bundle/).
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { import: string }> };
const index = pathToFileURL(path.join(ROOT, pkg.exports["."]!.import)).href;
const HEAVY = ["@modelcontextprotocol/sdk", "openai", "@anthropic-ai/sdk", "zod", "jiti", "smol-toml", "yaml", "ajv"];
/** A dependency is loaded from node_modules, from its one-file copy (dist/vendor/) or from its chunk of the bundle. */
const loaded = (modules: string[], name: string) =>
  modules.some((module) => module.includes(`/node_modules/${name}/`) || module.endsWith(`/dist/vendor/${name}.cjs`) || module.includes(`/dist/bundle/dep-${name.replace(/^@/, "").replace("/", "-")}-`));

describe('import "lllm"', () => {
  it("loads none of the MCP SDK, openai, Anthropic's SDK, zod, jiti, TOML, yaml or ajv", async () => {
    const result = await modulesLoadedBy(`const lllm = await import(${JSON.stringify(index)}); console.log(typeof lllm.Agent, typeof lllm.McpConnections, typeof lllm.createPackageServer);`, "plain");
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("function function function\n");
    // The hook saw the library itself, so an empty list cannot pass for a light one.
    expect(result.modules.some((module) => module === index)).toBe(true);
    expect(HEAVY.filter((name) => loaded(result.modules, name))).toEqual([]);
  });

  it("still gives `z`, loading zod when it is first used", async () => {
    const result = await modulesLoadedBy(
      `const { z, tool } = await import(${JSON.stringify(index)}); const t = tool({ name: "t", description: "d", parameters: z.object({ city: z.string() }), run: ({ city }) => city }); console.log(JSON.stringify(t.toTool().function.parameters.properties));`,
      "zod",
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe('{"city":{"type":"string"}}\n');
    expect(loaded(result.modules, "zod")).toBe(true);
  });

  it("creating anthropic/ and gemini/ models loads no SDK, and an OpenAI call never loads Anthropic's", async () => {
    const result = await modulesLoadedBy(
      `const { createModel } = await import(${JSON.stringify(index)}); createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "k" } }); createModel({ model: "gemini/gemini-2.5-flash", env: { GEMINI_API_KEY: "k" } }); const m = createModel({ model: "gpt-4o-mini", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, retry: { maxRetries: 0 } }); await m.generate({ messages: [{ role: "user", content: "hi" }] }).catch(() => {}); console.log("ok");`,
      "providers",
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("ok\n");
    expect(loaded(result.modules, "openai")).toBe(true);
    expect(loaded(result.modules, "@anthropic-ai/sdk")).toBe(false);
  });
});

// What a plain run must not load, and why each would be there: Node's fetch (undici, with http2, tls and perf_hooks
// behind it) for a model call over plain HTTP; jiti when no TypeScript file is imported (a warm transpile cache
// serves the rest); OpenTelemetry without LLLM_OTEL; the MCP SDK without an MCP server; BullMQ and Redis without a
// queue; libsql (the run store's database: a run only appends to its spool); the openai and Anthropic SDKs for a
// call that succeeds (their error classes load with the first failure).
const NOT_ON_A_PLAIN_RUN = ["undici", "jiti", "@opentelemetry/", "@modelcontextprotocol/sdk", "bullmq", "ioredis", "libsql", "openai", "@anthropic-ai/sdk"];
/** Which of NOT_ON_A_PLAIN_RUN the modules hold: Node's own undici is in moduleLoadList; a scope (`@x/`) stands for its packages. */
const heavyIn = (modules: string[]): string[] =>
  NOT_ON_A_PLAIN_RUN.filter((name) =>
    name === "undici"
      ? modules.some((module) => module.includes("internal/deps/undici/") || module.includes("/node_modules/undici/"))
      : name.endsWith("/")
        ? modules.some((module) => module.includes(`/node_modules/${name}`) || module.includes(`/dist/bundle/dep-${name.slice(1, -1)}-`))
        : loaded(modules, name),
  );
/** lllm's own files among the modules: the launcher, its bundle's chunks, its one-file dependencies. */
const ownFiles = (modules: string[]): string[] => modules.filter((module) => module.startsWith(pathToFileURL(path.join(ROOT, "bin")).href) || module.startsWith(pathToFileURL(path.join(ROOT, "dist")).href) || module.startsWith(path.join(ROOT, "dist")));

describe("a plain `lllm run` (the guard of start-up: npm run bench -- --check measures it)", () => {
  const tool = 'import { tool } from "lllm";\nexport default tool({ name: "get_weather", description: "Get the weather", parameters: { city: { type: "string", description: "The city" } }, run: ({ city }) => `Sunny in ${city}` });\n';
  const project = (extension: string): string =>
    tempTree({
      [`tools/get_weather.${extension}`]: tool,
      "tactic.yaml": "name: plain\ndescription: One tool.\npackages: [.]\nglobal:\n  tools: [get_weather]\nagent_configs:\n  - name: bot\n    system_prompt: You answer weather questions.\n",
      "turns.yaml": "- tool_calls:\n    - {name: get_weather, arguments: {city: Paris}}\n- text: Sunny in Paris.\n",
    });

  it("a scripted model and .mjs tools: none of undici, jiti (once its transpile cache is warm), OpenTelemetry, the MCP SDK, BullMQ, libsql, the SDKs", async () => {
    const folder = project("mjs");
    const home = tempDir("lllm-home-");
    const args = [BIN, "run", path.join(folder, "tactic.yaml"), "--model", `scripted:${path.join(folder, "turns.yaml")}`, "--input", "Paris?"];
    // The first run fills the caches (jiti transpiles the .mjs tool once): it is the list's own proof that it sees jiti.
    const cold = await modulesLoadedByNode(args, "run-cold", { LLLM_HOME: home });
    expect(cold.stdout).toBe("Sunny in Paris.\n");
    expect(cold.code, cold.stderr).toBe(0);
    expect(heavyIn(cold.modules)).toContain("jiti");
    const warm = await modulesLoadedByNode(args, "run-warm", { LLLM_HOME: home });
    expect(warm.stdout).toBe("Sunny in Paris.\n");
    expect(warm.code, warm.stderr).toBe(0);
    expect(ownFiles(warm.modules).length).toBeGreaterThan(0);
    expect(heavyIn(warm.modules)).toEqual([]);
  });

  it("an OpenAI-compatible server over HTTP and a TypeScript tool: no Node's fetch (undici), no openai SDK, none of the rest; a dozen of lllm's own files", async () => {
    // Stateless, so that the same answers come to both runs: a tool call, then the text once the tool has answered.
    const server = await startMockOpenAIServer({
      handler: (body) => ((body.messages ?? []).some((message) => message.role === "tool") ? "Sunny in Paris." : { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }),
    });
    try {
      const folder = project("ts");
      const home = tempDir("lllm-home-");
      const args = [BIN, "run", path.join(folder, "tactic.yaml"), "--model", "gpt-4o-mini", "--input", "Paris?"];
      const env = { LLLM_HOME: home, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-footprint-test" };
      const cold = await modulesLoadedByNode(args, "http-cold", env);
      expect(cold.stdout).toBe("Sunny in Paris.\n");
      const warm = await modulesLoadedByNode(args, "http-warm", env);
      expect(warm.stderr).toBe("");
      expect(warm.stdout).toBe("Sunny in Paris.\n");
      expect(heavyIn(warm.modules)).toEqual([]);
      // Each ES module costs Node a resolution, a read and a link: the run's code comes in a few chunks
      // (scripts/startupGroups.js), not one per shared helper as it did (some 60).
      expect(ownFiles(warm.modules).length).toBeLessThanOrEqual(15);
      // And each is ASCII (see "the build's JavaScript" below): none is held and decoded two bytes a character.
      const loadedFiles = ownFiles(warm.modules).map((module) => (module.startsWith("file:") ? fileURLToPath(module) : module));
      expect(loadedFiles.filter((file) => /\.c?js$/.test(file) && firstNonAscii(readFileSync(file, "utf8")) !== undefined)).toEqual([]);
      // Streamed (as on a terminal): the events are read from the socket, not through the SDK and Node's fetch.
      const streamed = await modulesLoadedByNode([...args, "--stream"], "http-streamed", env);
      expect(streamed.stderr).toBe("");
      expect(streamed.stdout).toBe("Sunny in Paris.\n");
      expect(heavyIn(streamed.modules)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("`lllm serve` of a package (its tactics as models and tools, its proxies, /mcp)", () => {
  /** Start the server with the module hook; once it listens, `whileServing(url, token)`, then SIGTERM. */
  async function serveOnce(home: string, name: string, whileServing?: (url: string, token: string) => Promise<void>): Promise<{ modules: string[]; stderr: string; code: number | null }> {
    const list = path.join(dir, `${name}.txt`);
    writeFileSync(list, "");
    const child = spawn(process.execPath, ["--import", pathToFileURL(register).href, BIN, "serve", path.join(ROOT, "packages-example", "weather"), "--http", "127.0.0.1:0"], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NO_COLOR: "1", LLLM_HOME: home, LLLM_MODULE_LIST: list },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    const listening = new Promise<{ url: string; token: string }>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const url = /at (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stderr)?.[1];
        const token = /Bearer ([\w-]+)/.exec(stderr)?.[1];
        if (url && token) resolve({ url, token });
      });
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const started = await Promise.race([listening, closed.then(() => undefined)]);
    expect(started, stderr).toBeDefined();
    await whileServing?.(started!.url, started!.token);
    child.kill("SIGTERM");
    const code = await closed;
    return { modules: readFileSync(list, "utf8").split("\n").filter(Boolean), stderr, code };
  }

  it("starts without the MCP SDK, zod or ajv's compiler (once its caches are warm), and loads the SDK when a client opens a session at /mcp", async () => {
    const home = tempDir("lllm-home-");
    // The first start fills the caches (the tactics' input validators, the built-in proxies' parsed data).
    expect((await serveOnce(home, "serve-cold")).code).toBe(0);
    const warm = await serveOnce(home, "serve-warm");
    expect(warm.code, warm.stderr).toBe(0);
    expect(ownFiles(warm.modules).length).toBeGreaterThan(0);
    expect(heavyIn(warm.modules)).toEqual([]);
    expect(warm.modules.filter((module) => module.includes("/node_modules/zod/") || module.includes("/dist/vendor/mcp-"))).toEqual([]);
    // ajv's runtime may serve a cached validator; its compiler (core.js, compile/) is what a start must not load.
    expect(warm.modules.filter((module) => /\/node_modules\/ajv\/dist\/(?:core|2020|ajv)\.js$|\/node_modules\/ajv\/dist\/compile\//.test(module))).toEqual([]);
    const used = await serveOnce(home, "serve-mcp", async (url, token) => {
      const response = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "footprint", version: "1" } } }),
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('"serverInfo"');
    });
    expect(used.code, used.stderr).toBe(0);
    // The SDK's server side and its HTTP transport, each in one file of lllm's (dist/vendor/).
    for (const file of ["mcp-server.cjs", "mcp-server-http.cjs"]) expect(used.modules.some((module) => module.endsWith(`/dist/vendor/${file}`)), file).toBe(true);
  });
});

describe("`lllm mcp serve` over stdio (an MCP client starts it for each session)", () => {
  /** One session: an initialize, then the end of its input (the client went away); the modules it loaded. */
  async function session(home: string, name: string): Promise<{ modules: string[]; stdout: string; stderr: string; code: number | null }> {
    const list = path.join(dir, `${name}.txt`);
    writeFileSync(list, "");
    const child = spawn(process.execPath, ["--import", pathToFileURL(register).href, BIN, "mcp", "serve", path.join(ROOT, "packages-example", "weather")], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NO_COLOR: "1", LLLM_HOME: home, LLLM_MODULE_LIST: list },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "footprint", version: "1" } } })}\n`);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    return { modules: readFileSync(list, "utf8").split("\n").filter(Boolean), stdout, stderr, code };
  }

  it("answers initialize with the SDK's server side in one file: nothing of the SDK, zod or ajv from node_modules, no HTTP transport, no undici", async () => {
    const home = tempDir("lllm-home-");
    // The first session fills the caches (the package's TypeScript tools transpiled, the validators).
    expect((await session(home, "mcp-serve-cold")).code).toBe(0);
    const warm = await session(home, "mcp-serve-warm");
    expect(warm.code, warm.stderr).toBe(0);
    expect(warm.stdout).toContain('"serverInfo"');
    expect(warm.modules.some((module) => module.endsWith("/dist/vendor/mcp-server.cjs"))).toBe(true);
    // From node_modules the SDK's server was ~300 files: the SDK, zod in four forms, ajv and its formats.
    expect(warm.modules.filter((module) => (/\/node_modules\/(?:@modelcontextprotocol|zod|zod-to-json-schema|ajv|ajv-formats)\//.test(module) && !module.endsWith("/package.json")) || module.endsWith("/dist/vendor/mcp-server-http.cjs"))).toEqual([]);
    expect(heavyIn(warm.modules)).toEqual([]);
  });
});

describe("`lllm validate` (the start-up bench's third pair)", () => {
  /** The text of lllm's own files a command loaded (chunks of the bundle, one-file dependencies). */
  const ownText = (modules: string[]): string => ownFiles(modules).map((module) => readFileSync(module.startsWith("file:") ? new URL(module) : module, "utf8")).join("\n");

  it("checks every model name without loading the model clients, which a run loads", async () => {
    const home = tempDir("lllm-home-");
    const example = path.join(ROOT, "packages-example", "weather");
    const validate = await modulesLoadedByNode([BIN, "validate", path.join(example, "tactics", "weather.yaml"), "--model", "gpt-4o-mini"], "validate", { LLLM_HOME: home });
    expect(validate.stderr).toBe("");
    expect(validate.stdout).toContain("ok tactic weather");
    const run = await modulesLoadedByNode([BIN, "run", path.join(example, "tactics", "weather.yaml"), "--model", `scripted:${path.join(example, "scripted", "paris-tokyo.yaml")}`, "--input", "Weather in Paris?", "--no-log"], "validate-run", { LLLM_HOME: home });
    expect(run.code, run.stderr).toBe(0);
    // The bundle names each module it holds in a comment: the run's files hold the clients, so the search finds them.
    const clients = ["OpenAIChatModel", "AnthropicModel", "GeminiModel", "ScriptedModel"].map((name) => `// providers/${name}.js\n`);
    expect(clients.filter((name) => ownText(run.modules).includes(name))).toEqual(clients);
    expect(clients.filter((name) => ownText(validate.modules).includes(name))).toEqual([]);
    // The tactic's schema is checked by code generated at build time, its own file (not the test files' or the
    // proxies' validators), with ajv's helpers it calls bundled in.
    expect(ownFiles(validate.modules).filter((module) => module.includes(path.join("config", "generated", path.sep))).map((module) => path.basename(module))).toEqual(["tactic.cjs"]);
    expect(["ajv", "ajv-formats"].filter((name) => loaded(validate.modules, name))).toEqual([]);
    // node:v8 (a few ms to load) was there for the code cache's key alone (jiti loads it: its transpile cache is
    // warm from the first start).
    const warm = await modulesLoadedByNode([BIN, "validate", path.join(example, "tactics", "weather.yaml"), "--model", "gpt-4o-mini"], "validate-warm", { LLLM_HOME: home });
    expect(warm.stdout).toBe(validate.stdout);
    expect(warm.modules).toContain("NativeModule vm");
    expect(warm.modules).not.toContain("NativeModule v8");
  });

  it("loads zod for a zod tool without its 40 translations, which `z.locales` still gives a tool", async () => {
    const home = tempDir("lllm-home-");
    const validate = await modulesLoadedByNode([BIN, "validate", path.join(ROOT, "packages-example", "weather", "tactics", "weather.yaml")], "validate-zod", { LLLM_HOME: home });
    expect(validate.code, validate.stderr).toBe(0);
    // draw.ts makes its parameters with zod.
    expect(loaded(validate.modules, "zod")).toBe(true);
    expect(ownText(validate.modules)).not.toContain("Entrée invalide");
    const folder = tempTree({
      "lllm.toml": '[package]\nname = "fr"\nversion = "0.1.0"\n',
      "tools/check.ts":
        'import { tool, z } from "lllm";\nexport default tool({ name: "check", description: "Check a number in French", parameters: { value: { type: "string" } }, run: ({ value }) => z.number().safeParse(Number.isNaN(Number(value)) ? value : Number(value), { error: z.locales.fr().localeError }).error?.issues[0]?.message ?? `${Object.keys(z.locales).length > 30}` });\n',
    });
    const called = await modulesLoadedByNode([BIN, "tools", "call", "fr.tools:check", "--args", '{"value": "abc"}', "-p", folder], "zod-locales", { LLLM_HOME: home });
    expect(called.stderr).toBe("");
    expect(called.stdout).toContain("Entrée invalide");
    const counted = await modulesLoadedByNode([BIN, "tools", "call", "fr.tools:check", "--args", '{"value": "1"}', "-p", folder], "zod-locales-keys", { LLLM_HOME: home });
    expect(counted.stdout).toContain("true");
  });
});

/** Where a text's first character beyond ASCII is, and which it is; undefined when there is none. */
function firstNonAscii(text: string): string | undefined {
  const found = /[^\x00-\x7f]/.exec(text);
  if (!found) return undefined;
  const line = text.slice(0, found.index).split("\n").length;
  return `line ${line}: ${JSON.stringify(found[0])} in ${JSON.stringify(text.slice(Math.max(0, found.index - 30), found.index + 10))}`;
}

describe("the build's JavaScript (rolldown's charset: ascii, scripts/bundle.js and build-validators.js)", () => {
  it("is ASCII throughout: V8 holds a source with one other character (a `…` in a message) as two bytes a character, and Node decodes it slowly", () => {
    // The bundle's own files (its build-stamp lists them): a rebuild carries the previous build's chunks over for a
    // CLI still running them (scripts/build.js), whatever they hold.
    const stamp = JSON.parse(readFileSync(path.join(ROOT, "dist", "build-stamp.json"), "utf8")) as { bundle: string[] };
    const ofBundle = stamp.bundle.filter((name) => /\.c?js$/.test(name)).map((name) => path.join(ROOT, "dist", "bundle", name));
    const folders = [path.join(ROOT, "dist", "vendor"), path.join(ROOT, "dist", "config", "generated", "validators")];
    const files = [...ofBundle, ...folders.flatMap((folder) => readdirSync(folder).filter((name) => /\.c?js$/.test(name)).map((name) => path.join(folder, name)))];
    // The chunks a run loads, the vendored zod and yaml, the tactic's validator: all there, so an empty list cannot pass.
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => {
      const where = firstNonAscii(readFileSync(file, "utf8"));
      return where === undefined ? [] : [`${path.relative(ROOT, file)} ${where}`];
    });
    expect(found).toEqual([]);
  });

  it("still prints what its sources say: an escaped `…` comes out as the character", async () => {
    // The built CLI, in a clean environment with no key.
    const result = await runCli(["run", path.join(ROOT, "bench", "fixtures", "rounds.yaml"), "--model", "gpt-4o-mini", "--input", "x"]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("set it with `export OPENAI_API_KEY=…`");
  });
});
