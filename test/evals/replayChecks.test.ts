import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import type { MockRequestBody } from "../../src/testing/RecordedRequest.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ECHO = 'import { tool } from "lllm";\nexport default tool({ name: "echo", description: "Echo a word", parameters: { word: { type: "string" } }, run: ({ word }) => `echo:${word}` });\n';
const HELPER = "name: helper\ndescription: Ask the helper a question.\nprompt: '{input}'\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: aide\n    system_prompt: You are the helper.\n";
const TESTS = [
  "tactic: tactic.yaml",
  "cases:",
  "  - name: echoes",
  "    input: echo word a",
  "    assert: [{contains: 'echo:a'}]",
  "  - name: asks the helper",
  "    input: ask the helper",
  "    assert: [{contains: 'helper says hi'}]",
  "  - name: talks",
  "    turns: [hi, again]",
  "",
].join("\n");

/** A tactic whose agent has a package tool (`echo`) and a tactic used as a tool (`helper`), and its test file. */
function project(): string {
  return tempTree({
    "pkg/lllm.yaml": "name: pkg\n",
    "pkg/tools/echo.ts": ECHO,
    "pkg/tactics/helper.yaml": HELPER,
    "tactic.yaml": "name: crew\npackages: [./pkg]\nprompt: '{input}'\nglobal:\n  model_name: gpt-4o-mini\n  tools: [echo, pkg.tactics:helper]\nagent_configs:\n  - name: bot\n    system_prompt: You help.\n",
    "crew.test.yaml": TESTS,
  });
}

/** The model: the helper's agent says so; a request naming a tool calls it; a tool's result is the answer. */
function model(body: MockRequestBody): ScriptedTurn {
  const messages = body.messages ?? [];
  if (String(messages[0]?.["content"]).includes("You are the helper")) return "helper says hi";
  const last = messages.at(-1)!;
  if (last["role"] === "tool") return String(last["content"]).split("\n---\n")[1]?.replace(/\n---$/, "") ?? "?";
  const text = String(last["content"]);
  const word = /echo word (\w+)/.exec(text)?.[1];
  if (word) return { tool_calls: [{ name: "echo", arguments: { word } }] };
  if (text.includes("helper")) return { tool_calls: [{ name: "helper", arguments: { task: "hi" } }] };
  return `you said: ${text}`;
}

async function liveEnv(): Promise<NodeJS.ProcessEnv> {
  server = await startMockOpenAIServer({ handler: model });
  return { OPENAI_API_KEY: "k-replay-checks", OPENAI_BASE_URL: server.url };
}

const homes = new Map<string, string>();

/**
 * `lllm test` on the project, offline unless `env` names a server. One LLLM_HOME a project, so its caches stay warm.
 * The CLI's main() in this process, unless `cli` is `runCli`: a run after a change to a tool's code is the built CLI,
 * since it must load the tool as it is now (a process imports a module once).
 */
function test(dir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, cli: (args: string[], options: CliOptions) => Promise<CliResult> = runCliInProcess) {
  if (!homes.has(dir)) homes.set(dir, tempDir("lllm-home-"));
  return cli(["test", dir, ...(Object.keys(env).length === 0 ? ["--offline"] : []), ...args], { env: { LLLM_HOME: homes.get(dir)!, ...env }, cwd: dir, timeoutMs: 120_000 });
}

/** Change a file for one check, and put it back. */
async function withChange<T>(file: string, from: string, to: string, check: () => Promise<T>): Promise<T> {
  const before = readFileSync(file, "utf8");
  expect(before).toContain(from);
  writeFileSync(file, before.replace(from, to));
  try {
    return await check();
  } finally {
    writeFileSync(file, before);
  }
}

describe("a replay notices every change the model would see", { timeout: 240_000 }, () => {
  it("a tool's description or parameters, a tactic-tool's description, another model: the replay diverges with the change; --update records it again", async () => {
    const dir = project();
    const recorded = await test(dir, ["--record"], await liveEnv());
    expect(recorded.stderr).toContain("Tests: 3 passed (3 cases)");
    expect(recorded.code, recorded.stderr).toBe(0);
    const cassette = readFileSync(path.join(dir, "__cassettes__/crew.test.yaml/echoes.yaml"), "utf8");
    expect(cassette).toContain("setup:\n  bot:\n    models:\n      - provider: openai\n        name: gpt-4o-mini\n    tools:\n      - name: echo\n        description: Echo a word\n");
    const clean = await test(dir);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).not.toContain("warning");

    const echo = path.join(dir, "pkg/tools/echo.ts");
    const described = await withChange(echo, '"Echo a word"', '"Echo a word back, loudly"', () => test(dir, [], {}, runCli));
    expect(described.code, described.stderr).toBe(1);
    expect(described.stderr).toContain("✗ crew.test.yaml › echoes  (replay");
    expect(described.stderr).toContain("the replay diverged at agent `bot`'s model call 1: the model would now read tool `echo` otherwise than the recording did:\n         its description differs:\n         - recorded: \"Echo a word\"\n         + now:      \"Echo a word back, loudly\"");
    expect(described.stderr).toContain("Record it again if the change is intended: lllm test crew.test.yaml --update --filter echoes");
    expect(described.stderr).toContain("Tests: 3 failed (3 cases)");

    const shaped = await withChange(echo, 'parameters: { word: { type: "string" } }', 'parameters: { word: { type: "string" }, loud: { type: "boolean" } }', () => test(dir, [], {}, runCli));
    expect(shaped.code, shaped.stderr).toBe(1);
    expect(shaped.stderr).toContain("the model would now read tool `echo` otherwise than the recording did:\n         its parameters differ:");
    expect(shaped.stderr).toMatch(/\+\s+"loud": \{/);

    const helper = path.join(dir, "pkg/tactics/helper.yaml");
    const nested = await withChange(helper, "description: Ask the helper a question.", "description: Ask the helper anything.", () => test(dir));
    expect(nested.code, nested.stderr).toBe(1);
    expect(nested.stderr).toContain("the model would now read tool `helper` otherwise than the recording did:\n         its description differs:");
    expect(nested.stderr).toContain("+ now:      \"Ask the helper anything.\"");

    const testFile = path.join(dir, "crew.test.yaml");
    const other = await withChange(testFile, "tactic: tactic.yaml\n", "tactic: tactic.yaml\nmodel: gpt-4o\n", async () => {
      const replayed = await test(dir);
      expect(replayed.code, replayed.stderr).toBe(1);
      expect(replayed.stderr).toContain("the replay diverged at agent `bot`'s model call 1: the agent now calls openai/gpt-4o, but the recording was answered by openai/gpt-4o-mini (its answers, token counts and price are that model's)");
      // Recorded again with the new model, the replay passes.
      const updated = await test(dir, ["--update"], await liveEnv());
      expect(updated.code, updated.stderr).toBe(0);
      expect(readFileSync(path.join(dir, "__cassettes__/crew.test.yaml/echoes.yaml"), "utf8")).toContain("      - provider: openai\n        name: gpt-4o\n");
      return test(dir);
    });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain("Tests: 3 passed (3 cases)");
  });

  it("a cassette recorded before the setup was kept replays as before, with a note to record it again", async () => {
    const dir = project();
    expect((await test(dir, ["--record", "--filter", "echoes"], await liveEnv())).code).toBe(0);
    const file = path.join(dir, "__cassettes__/crew.test.yaml/echoes.yaml");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/^setup:\n(?: .*\n)+/m, ""));
    expect(readFileSync(file, "utf8")).not.toContain("setup:");
    const replayed = await withChange(path.join(dir, "pkg/tools/echo.ts"), '"Echo a word"', '"Echo a word back"', () => test(dir, ["--filter", "echoes"], {}, runCli));
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain(
      "lllm: warning: a cassette was recorded before lllm kept each agent's model and the tools as the model read them (__cassettes__/crew.test.yaml/echoes.yaml): their replays check the messages and the tool results, not the model or the tools' descriptions and parameters. Record again to check those too: lllm test crew.test.yaml --update",
    );
  });

  it("recorded turns the run no longer asks for fail the case", async () => {
    const dir = project();
    expect((await test(dir, ["--record", "--filter", "talks"], await liveEnv())).code).toBe(0);
    const shorter = await withChange(path.join(dir, "crew.test.yaml"), "turns: [hi, again]", "turns: [hi]", () => test(dir, ["--filter", "talks"]));
    expect(shorter.code, shorter.stderr).toBe(1);
    expect(shorter.stderr).toContain("✗ crew.test.yaml › talks  (replay");
    expect(shorter.stderr).toContain("the recording has 1 more turn than the run used (agent `bot`: 2 recorded, 1 asked): the run now calls the model less often than when it was recorded");
    expect(shorter.stderr).toContain("--update --filter talks");
  });
});
