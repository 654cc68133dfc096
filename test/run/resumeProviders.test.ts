import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, type ScriptedTurn } from "../../src/testing/index.js";
import { durableProject } from "../helpers/durableProject.js";
import { startCli, waitUntil } from "../helpers/processTree.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";

// A resumed run goes on live after answers it replays from its record: the live model must send back with those
// answers' tool calls what their provider wants back (Gemini 3's thought signatures, Anthropic's signed thinking),
// as the first attempt's would have. The mocks refuse a request that lacks them or carries ones they never gave.

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const turns: ScriptedTurn[] = [0, 1, 2].map((n) => ({ tool_calls: [{ name: "look", arguments: { n } }] }));
turns.push("Looked three times.");

const providers = [
  {
    name: "Gemini 3, whose function calls carry thought signatures",
    model: "gemini/gemini-3-pro-preview",
    modelArgs: "",
    start: async () => {
      const server = await startMockGeminiServer({ script: turns, thoughtSignatures: true, functionCallIds: true });
      return { server, env: { GEMINI_API_KEY: "AIza-test-0000", GEMINI_BASE_URL: server.url } };
    },
  },
  {
    name: "Claude with extended thinking, whose thinking goes back signed with its tool calls",
    model: "anthropic/claude-sonnet-4-5",
    modelArgs: "    model_args: {thinking: {budget_tokens: 2000}}\n",
    start: async () => {
      const server = await startMockAnthropicServer({ script: turns, thinking: "Let me look it up." });
      return { server, env: { ANTHROPIC_API_KEY: "sk-ant-test-0000", ANTHROPIC_BASE_URL: server.url } };
    },
  },
];

describe.each(providers)("lllm run --resume with $name", ({ model, modelArgs, start }) => {
  it("replays the recorded answers and goes on live with what the provider wants back", async () => {
    const { server, env: keys } = await start();
    close = () => server.close();
    const dir = tempDir("lllm-resume-provider-");
    writeTree(dir, {
      "kit/lllm.toml": '[package]\nname = "kit"\nversion = "1.0.0"\n',
      // Blocks in its third call while the file `block` exists (the run is killed there); calling it twice is harmless.
      "kit/tools/look.mjs": [
        'import { existsSync, writeFileSync } from "node:fs";',
        'export const look = { name: "look", description: "Looks a value up.", idempotent: true, parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },',
        '  run: async ({ n }) => {',
        '    if (n === 2 && existsSync("block")) { writeFileSync("blocked", ""); await new Promise(() => setInterval(() => {}, 60_000)); }',
        '    return `value ${n * 7}`;',
        '  } };',
        "",
      ].join("\n"),
      "tactic.yaml": `name: looker\npackages: [./kit]\nagent_configs:\n  - name: main\n    model_name: ${model}\n${modelArgs}    system_prompt: Look things up.\n    tools: [kit.tools:look]\n`,
      block: "",
    });
    const env = { ...keys, LLLM_HOME: path.join(dir, "home"), LLLM_RETRY_DELAY_MS: "1", OPENAI_API_KEY: "" };
    const first = startCli(["run", "tactic.yaml", "--input", "Look."], { cwd: dir, env });
    expect(await waitUntil(() => existsSync(path.join(dir, "blocked")), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    rmSync(path.join(dir, "block"));
    writeFileSync(path.join(dir, "blocked"), "");

    const resumed = await runCli(["run", "--resume", "--json"], { cwd: dir, env, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { output: string }).output).toBe("Looked three times.");
    // The three tool-calling answers came from the record; one request went live, and was accepted.
    expect(server.requests).toHaveLength(4);
  }, 240_000);
});

describe("a resumed run on a scripted model (--model scripted:FILE)", () => {
  it("goes on live from the script's next turn, not from its first again", async () => {
    const project = await durableProject();
    close = () => project.close();
    const script = path.join(project.dir, "script.yaml");
    writeFileSync(script, `${[1, 2, 3].map((n) => `- tool_calls: [{name: look, arguments: {n: ${n}}}]`).join("\n")}\n- Looked three times.\n`);
    await project.crashInTool("look", 2, ["run", project.tactic(), "--input", "go", "--model", `scripted:${script}`]);
    // `look` may run again: the call cut short runs again, and the run goes on at the script's third turn.
    const resumed = await runCli(["run", "--resume", "--json"], { cwd: project.dir, env: project.env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as { output: string; usage: { llm_calls: number } };
    expect(json.output).toBe("Looked three times.");
    expect(json.usage.llm_calls).toBe(4);
    expect(project.toolCalls()).toEqual(["look 1", "look 2", "look 2", "look 3"]);
  });
});
