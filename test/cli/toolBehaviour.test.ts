import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// Each case spawns the CLI, some several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

/**
 * What a package's own tool code does to the CLI, end to end through the built `lllm`: a tool that never
 * settles, a tool that prints, a tool that throws. stdout must carry only the answer (or the JSON), and a run
 * without an answer must never exit 0.
 */
const made: string[] = [];
let server: MockOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const TOOLS: Record<string, string> = {
  "pkg/tools/hang.ts": 'import { tool } from "lllm";\nexport default tool({ name: "hang", description: "never settles", run: () => new Promise(() => {}) });\n',
  "pkg/tools/chatty.ts": [
    'import { tool } from "lllm";',
    'console.log("loading chatty");',
    "export default tool({",
    '  name: "chatty",',
    '  description: "prints while it works",',
    '  parameters: { city: { type: "string" } },',
    "  run: async ({ city }: { city: string }) => {",
    '    console.log("looking up", city);',
    '    process.stdout.write("partial ");',
    "    await new Promise((resolve) => setTimeout(resolve, 5));",
    '    process.stdout.write("line\\n");',
    '    console.error("a warning");',
    "    return `sunny in ${city}`;",
    "  },",
    "});",
    "",
  ].join("\n"),
  "pkg/tools/boom.ts": [
    'import { tool } from "lllm";',
    "",
    "function lookUp(city: string): never {",
    "  throw new Error(`no weather for ${city}`);",
    "}",
    'export default tool({ name: "boom", description: "throws", parameters: { city: { type: "string" } }, run: ({ city }: { city: string }) => lookUp(city) });',
    "",
  ].join("\n"),
  "pkg/tools/noisy.yaml": 'name: noisy\ndescription: a command tool that logs on stderr\ncommand: [python3, -c, "import sys; sys.stderr.write(\'working hard\\\\n\'); print(\'done\')"]\n',
  // Returns at once and writes later, from a timer: after the run's last tool has settled, outside any tool scope.
  "pkg/tools/late.ts": 'import { tool } from "lllm";\nexport default tool({ name: "late", description: "writes later", run: () => { setTimeout(() => { console.log("late line"); process.stdout.write("late write\\n"); process.stderr.write("\\nlllm: error: forged \\u001b[31mred\\n"); }, 300); return "ok"; } });\n',
  // Returns at once, having queued its writes: after it returned, when its scope is no longer entered.
  "pkg/tools/queued.ts": 'import { tool } from "lllm";\nexport default tool({ name: "queued", description: "writes from what it queued", run: () => { Promise.resolve().then(() => console.log("from then")); queueMicrotask(() => console.log("from a microtask")); process.nextTick(() => process.stdout.write("from nextTick\\n")); setImmediate(() => process.stderr.write("from setImmediate \\u001b[31m\\n")); return "queued"; } });\n',
  "tactic.yaml": "name: t\npackages: [./pkg]\nagent_configs:\n  - name: bot\n    model_name: gpt-test\n    system_prompt: You help.\n    tools: [hang, chatty, boom, noisy, late, queued]\n",
};

function tree(extra: Record<string, string> = {}): string {
  const dir = tempDir("lllm-tools-");
  made.push(dir);
  for (const [name, text] of Object.entries({ ...TOOLS, ...extra })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** A scripted model file: the given turns, replayed by `--model scripted:turns.yaml`. */
function scripted(turns: unknown[]): Record<string, string> {
  return { "turns.json": JSON.stringify(turns) };
}

async function overHttp(dir: string, args: string[], script: ScriptedTurn[]): Promise<Awaited<ReturnType<typeof runCli>>> {
  server = await startMockOpenAIServer({ script });
  return runCli(args, { cwd: dir, env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url } });
}

describe("a tool that never settles", () => {
  it("lllm run (scripted model) fails with exit 1 and names the tool instead of exiting 0 with nothing", async () => {
    const dir = tree(scripted([{ tool_calls: [{ name: "hang", arguments: {} }] }, { text: "never reached" }]));
    const result = await runCli(["run", "tactic.yaml", "--model", "scripted:turns.json", "--input", "go"], { cwd: dir });
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("lllm: error:");
    expect(result.stderr).toContain("tool `hang` never finished");
    expect(result.stderr).toContain("hang.ts");
    expect(result.code, result.stderr).toBe(1);
  });

  it("lllm run over HTTP with --json prints one failure object", async () => {
    const dir = tree();
    const result = await overHttp(dir, ["run", "tactic.yaml", "--input", "go", "--json"], [{ tool_calls: [{ name: "hang", arguments: {} }] }, "never reached"]);
    expect(result.code, result.stderr).toBe(1);
    const failure = JSON.parse(result.stdout) as { schema_version: number; error: { code: string; message: string } };
    expect(failure.schema_version).toBe(1);
    expect(failure.error.code).toBe("tool_never_settled");
    expect(failure).toMatchObject({ output: null, usage: { llm_calls: 1 } });
    expect(failure.error.message).toContain("`hang`");
  });

  it("a tool file whose top-level code never settles is named too", async () => {
    const dir = tree({ "late/tools/late.ts": 'import { tool } from "lllm";\nawait new Promise(() => {});\nexport default tool({ name: "late", description: "d", run: () => 1 });\n' });
    const result = await runCli(["tools", "list", "-p", "late"], { cwd: dir });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toContain("package file `late.ts` never finished loading");
  });

  it("lllm tools call fails too", async () => {
    const dir = tree();
    const result = await runCli(["tools", "call", "hang", "-p", "pkg"], { cwd: dir });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toContain("tool `hang` never finished");
  });
});

describe("what a tool prints goes to stderr, marked with its name", () => {
  it("run --json: stdout is exactly the JSON; console.log, process.stdout.write and console.error are on stderr", async () => {
    const dir = tree(scripted([{ tool_calls: [{ name: "chatty", arguments: { city: "Paris" } }] }, { text: "Sunny in Paris." }]));
    const result = await runCli(["run", "tactic.yaml", "--model", "scripted:turns.json", "--input", "Paris?", "--json"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { schema_version: number; output: string };
    expect(report).toMatchObject({ schema_version: 1, output: "Sunny in Paris." });
    expect(result.stderr).toContain("[chatty.ts] loading chatty\n");
    expect(result.stderr).toContain("[chatty] looking up Paris\n");
    expect(result.stderr).toContain("[chatty] partial line\n");
    expect(result.stderr).toContain("[chatty] a warning\n");
  });

  it("what a tool writes later, from a timer it left running, still goes to stderr, marked with its name", async () => {
    const dir = tree(scripted([{ tool_calls: [{ name: "late", arguments: {} }] }, { text: "Done." }]));
    const result = await runCli(["run", "tactic.yaml", "--model", "scripted:turns.json", "--input", "go", "--no-stream"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Done.\n");
    // The timer fires after the answer (the process waits for it), so these lines were written: on stderr.
    // Marked and escaped as what it writes while it runs, on every Node (before 24, the scope is found on the timer).
    expect(result.stderr).toContain("[late] late line\n");
    expect(result.stderr).toContain("[late] late write\n");
    expect(result.stderr).toContain("[late] lllm: error: forged \\u001b[31mred\n");
    expect(result.stderr).not.toMatch(/^lllm: error: forged/m);
  });

  it("what a tool that returned at once had queued (then, queueMicrotask, nextTick, setImmediate) goes to stderr, marked with its name", async () => {
    const dir = tree(scripted([{ tool_calls: [{ name: "queued", arguments: {} }] }, { text: "Done." }]));
    const result = await runCli(["run", "tactic.yaml", "--model", "scripted:turns.json", "--input", "go", "--no-stream"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Done.\n");
    for (const line of ["from then", "from a microtask", "from nextTick", "from setImmediate \\u001b[31m"]) expect(result.stderr).toContain(`[queued] ${line}\n`);
  });

  it("tools call: the answer alone on stdout; a command tool's stderr is shown on stderr with its name", async () => {
    const dir = tree();
    const chatty = await runCli(["tools", "call", "chatty", "-p", "pkg", "--args", '{"city": "Oslo"}'], { cwd: dir });
    expect(chatty.code, chatty.stderr).toBe(0);
    expect(chatty.stdout).toBe("Return of calling function chatty with arguments {'city': 'Oslo'}:\n---\nsunny in Oslo\n---\n");
    expect(chatty.stderr).toContain("[chatty] looking up Oslo\n");
    const noisy = await runCli(["tools", "call", "noisy", "-p", "pkg"], { cwd: dir });
    expect(noisy.code, noisy.stderr).toBe(0);
    expect(noisy.stdout).not.toContain("working hard");
    expect(noisy.stderr).toContain("[noisy] working hard\n");
  });
});

describe("a tool that throws", () => {
  it("--verbose shows the tool's file:line and the stack on stderr; the model reads only Error: <message>", async () => {
    const dir = tree();
    const result = await overHttp(dir, ["run", "tactic.yaml", "--input", "Rome?", "--verbose"], [{ tool_calls: [{ name: "boom", arguments: { city: "Rome" } }] }, "No weather for Rome."]);
    expect(result).toMatchObject({ code: 0, stdout: "No weather for Rome.\n" });
    expect(result.stderr).toMatch(/tool `boom` threw at .*pkg\/tools\/boom\.ts:4:\d+/);
    expect(result.stderr).toMatch(/at lookUp \(.*boom\.ts:4:\d+\)/);
    const posts = server!.requests.filter((request) => request.method === "POST");
    const last = (posts[1]!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    expect(last).toMatchObject({ role: "tool", content: "Error: no weather for Rome" });
  });

  it("without --verbose there is no stack", async () => {
    const dir = tree();
    const result = await runCli(["tools", "call", "boom", "-p", "pkg", "--args", '{"city": "Rome"}'], { cwd: dir });
    expect(result).toMatchObject({ code: 1, stdout: "Error: no weather for Rome\n" });
    expect(result.stderr).not.toContain("boom.ts:4");
    const verbose = await runCli(["tools", "call", "boom", "-p", "pkg", "--args", '{"city": "Rome"}', "--verbose"], { cwd: dir });
    expect(verbose.stderr).toMatch(/tool `boom` threw at .*boom\.ts:4/);
  });
});

describe("one broken tool file in a package", () => {
  const broken = { "pkg/tools/broken.ts": 'import { tool } from "lllm";\nexport const x = tool({ name: "x", \n', "pkg/tools/empty.ts": "export default 5;\n" };

  it("tools call of a healthy tool works; the broken files are reported on stderr", async () => {
    const dir = tree(broken);
    const result = await runCli(["tools", "call", "chatty", "-p", "pkg", "--args", '{"city": "Oslo"}'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("sunny in Oslo");
    expect(result.stderr).toMatch(/lllm: warning: .*pkg\/tools\/broken\.ts:\d+:\d+: tool file failed to load: ParseError: /);
    expect(result.stderr).toMatch(/pkg\/tools\/empty\.ts: tool file defines no tool: its exports are `default` \(number\)/);
  });

  it("tools list lists the healthy tools and warns about the broken files", async () => {
    const dir = tree(broken);
    const result = await runCli(["tools", "list", "-p", "pkg"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("pkg.tools:chatty");
    expect(result.stderr).toContain("broken.ts");
  });

  it("a run that does not use the broken tool runs; one that does fails naming the file; validate exits 2", async () => {
    const dir = tree({ ...broken, ...scripted([{ text: "Fine." }]), "uses_x.yaml": "packages: [./pkg]\nagent_configs:\n  - name: bot\n    model_name: m\n    system_prompt: hi\n    tools: [chatty, x]\n" });
    const ok = await runCli(["run", "tactic.yaml", "--model", "scripted:turns.json", "--input", "go"], { cwd: dir });
    expect(ok).toMatchObject({ code: 0, stdout: "Fine.\n" });
    expect(ok.stderr).toContain("broken.ts");
    const usesBroken = await runCli(["run", "uses_x.yaml", "--model", "scripted:turns.json", "--input", "go"], { cwd: dir });
    expect(usesBroken.code, usesBroken.stderr).toBe(2);
    expect(usesBroken.stderr).toContain("tool `x` not found");
    expect(usesBroken.stderr).toMatch(/did not load and may define it: .*broken\.ts/);
    const validate = await runCli(["validate", "tactic.yaml"], { cwd: dir });
    expect(validate.code, validate.stderr).toBe(2);
    expect(validate.stderr).toContain("broken.ts");
    expect(validate.stderr).toContain("empty.ts");
  });
});
