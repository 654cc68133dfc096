import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startMockAnthropicServer } from "../../src/testing/mockAnthropicServer.js";
import { startMockOpenAIServer } from "../../src/testing/mockOpenAIServer.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";

/**
 * Model names and routing: `lllm models`, an unknown prefix, a name the model table does not know. The first of each
 * command (`models`, `run`, `batch`) spawns the built CLI, end to end; the others run its main() in this process. The
 * `models` that must not print a key's value stays a spawn: lllm's redactor is one for the whole process and only grows,
 * so in this process an earlier call could hide the value.
 */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const home = mkdtempSync(path.join(os.tmpdir(), "lllm-models-home-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const base = { LLLM_HOME: home, OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "", GOOGLE_API_KEY: "" };

describe("lllm models", () => {
  it("lists the prefixes, their key variables and whether each is set (never the value), and the known models", async () => {
    const result = await runCli(["models"], { env: { ...base, ANTHROPIC_API_KEY: "sk-ant-secret-5555", GOOGLE_API_KEY: "AIza-secret-6666" } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^anthropic\/\s+ANTHROPIC_API_KEY set/m);
    expect(result.stdout).toMatch(/^gemini\/\s+GEMINI_API_KEY or GOOGLE_API_KEY set/m);
    expect(result.stdout).toMatch(/^openai\/\s+OPENAI_API_KEY NOT set/m);
    expect(result.stdout).toContain("anthropic/claude-haiku-4-5");
    expect(result.stdout).toContain("gemini/gemini-2.5-flash");
    expect(result.stdout).toContain("gpt-4o-mini");
    expect(result.stdout).not.toContain("secret");
  }, 60_000);

  it("--json gives one object with every provider", async () => {
    const result = await runCliInProcess(["models", "--json"], { env: { ...base, OPENAI_API_KEY: "sk-x" } });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { schema_version: number; providers: Array<{ prefix: string; key_env: string[]; key_set: boolean; models: string[] }> };
    expect(report.schema_version).toBe(1);
    const byPrefix = new Map(report.providers.map((provider) => [provider.prefix, provider]));
    expect(byPrefix.get("openai/")).toMatchObject({ key_env: ["OPENAI_API_KEY"], key_set: true });
    expect(byPrefix.get("anthropic/")).toMatchObject({ key_env: ["ANTHROPIC_API_KEY"], key_set: false });
    expect(byPrefix.get("gemini/")!.models).toContain("gemini-2.5-pro");
    expect(byPrefix.get("ollama/")).toMatchObject({ key_env: [], models: [] });
  }, 60_000);
});

describe("model names in lllm run", () => {
  it("an unknown prefix is a usage error (exit 2) before any call, with did-you-mean", async () => {
    const result = await runCli(["run", loop, "--model", "antropic/claude-haiku-4-5", "--input", "hi"], { env: { ...base, ANTHROPIC_API_KEY: "k" } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("unknown provider prefix `antropic/`");
    expect(result.stderr).toContain("did you mean `anthropic/`?");
  }, 60_000);

  it("a name the table does not know gets a warning naming the closest ones, and the run goes on", async () => {
    const result = await runCliInProcess(["run", loop, "--model", "gpt-4o-mni", "--input", "hi", "--dry-run"], { env: { ...base, OPENAI_API_KEY: "k" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("model `gpt-4o-mni` is not in lllm's model table");
    expect(result.stderr).toContain("`gpt-4o-mini`");
    expect(JSON.parse(result.stdout)).toMatchObject({ model: "gpt-4o-mni" });
  }, 60_000);

  it("lllm batch warns the same way, before its items run, and the items still run", async () => {
    const server = await startMockAnthropicServer({ script: ["Sunny."] });
    try {
      const items = path.join(home, "items.txt");
      writeFileSync(items, "Paris?\n");
      const result = await runCli(["batch", loop, "--model", "anthropic/claude-haku-4-5", "--inputs", items, "--lines", "--quiet", "--no-log"], { env: { ...base, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain("model `anthropic/claude-haku-4-5` is not in lllm's model table");
      expect(result.stderr).toContain("`anthropic/claude-haiku-4-5`");
      expect(JSON.parse(result.stdout)).toMatchObject({ status: "ok", output: "Sunny." });
    } finally {
      await server.close();
    }
  }, 60_000);

  it("lllm validate warns the same way, on stderr, and still validates (exit 0, stdout unchanged)", async () => {
    const env = { ...base, OPENAI_API_KEY: "k" };
    const text = await runCliInProcess(["validate", loop, "--model", "gpt-4o-mni"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain("model `gpt-4o-mni` is not in lllm's model table");
    expect(text.stderr).toContain("`gpt-4o-mini`");
    expect(text.stdout).toMatch(/^ok tactic /);
    expect(text.stdout).not.toContain("model table");
    const json = await runCliInProcess(["validate", loop, "--model", "gpt-4o-mni", "--json"], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toContain("model `gpt-4o-mni` is not in lllm's model table");
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, agents: [{ model: "gpt-4o-mni" }] });
  }, 60_000);

  it("the same for a provider prefix: anthropic/claude-haku-4-5", async () => {
    const result = await runCliInProcess(["run", loop, "--model", "anthropic/claude-haku-4-5", "--input", "hi", "--dry-run"], { env: { ...base, ANTHROPIC_API_KEY: "k" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("`anthropic/claude-haiku-4-5`");
  }, 60_000);

  it("with OPENAI_BASE_URL, a prefix typo goes whole to that server with one warning, and is not priced as the prefix says", async () => {
    const server = await startMockOpenAIServer({ script: ["Done.", "Done."] });
    try {
      const team = path.join(ROOT, "test/fixtures/limits/team.yaml");
      const env = { ...base, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url };
      // Two agents with the same model: the warning says it once.
      const result = await runCliInProcess(["run", team, "--model", "anthropc/claude-sonnet-4-5", "--input", "hi", "--json"], { env });
      expect(result.code, result.stderr).toBe(0);
      const warnings = result.stderr.split("\n").filter((line) => line.startsWith("lllm: warning:"));
      expect(warnings).toEqual([`lllm: warning: model \`anthropc/claude-sonnet-4-5\`: \`anthropc/\` is not a provider prefix lllm knows, so the whole name goes to the server of OPENAI_BASE_URL (${server.url}) and its calls have no price; did you mean \`anthropic/claude-sonnet-4-5\`? If the name is right for that server, ignore this (\`prices:\` in the project settings gives it a price).`]);
      expect(server.requests.find((request) => request.method === "POST")!.body.model).toBe("anthropc/claude-sonnet-4-5");
      // It went to the OpenAI-compatible server: Anthropic's price does not apply, so its cost is unknown, and a cost limit refuses it.
      expect((JSON.parse(result.stdout) as { cost: number | null }).cost).toBeNull();
      const limited = await runCliInProcess(["run", team, "--model", "anthropc/claude-sonnet-4-5", "--input", "hi", "--max-cost", "1"], { env });
      expect(limited.code, limited.stderr).toBe(2);
      expect(limited.stderr).toContain("model `anthropc/claude-sonnet-4-5` has no known price, so --max-cost cannot count what it costs");
      // A model typo is a word worth saying there too.
      const typo = await runCliInProcess(["run", loop, "--model", "gpt-4o-mni", "--input", "hi", "--dry-run"], { env });
      expect(typo.stderr).toContain("model `gpt-4o-mni` is not in lllm's model table");
    } finally {
      await server.close();
    }
  }, 90_000);

  it("no warning for a known name, a dated one, a local server's model, or a name like no known one", async () => {
    for (const model of ["anthropic/claude-haiku-4-5", "gpt-4o-2024-08-06", "ollama/llama3", "my-finetune"]) {
      const result = await runCliInProcess(["run", loop, "--model", model, "--input", "hi", "--dry-run"], { env: { ...base, ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" } });
      expect(result.code, model).toBe(0);
      expect(result.stderr, model).toBe("");
    }
  }, 90_000);
});
