import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { refusalText } from "../../src/agent/runToolRound.js";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult, type CliOptions } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** A busy machine can take long to start the CLI: a generous limit, since a passing run waits no longer than it must. */
const cli = (args: string[], options: CliOptions = {}): Promise<CliResult> => runCli(args, { timeoutMs: 120_000, ...options });

/**
 * Approval in the plain tool loop, from the CLI through pipes (nobody at a terminal): a tool declared `approval:
 * required` (or named in `require_approval`) is refused unless `--approve all`, and the model reads the refusal.
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const erase = (key: string): ScriptedTurn => ({ tool_calls: [{ name: "erase", arguments: { key } }] });
type WireMessage = { role: string; content: string | null };

async function run(tactic: string, script: ScriptedTurn[], args: string[] = []): Promise<CliResult & { outbox: string[]; home: string }> {
  server = await startMockOpenAIServer({ script });
  const home = tempDir("lllm-home-");
  const outbox = path.join(home, "outbox.txt");
  const result = await cli(["run", path.join(fixtures, tactic), "--input", "Clean up.", ...args], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_OUTBOX: outbox } });
  return { ...result, outbox: existsSync(outbox) ? readFileSync(outbox, "utf8").trim().split("\n") : [], home };
}

describe("approval in the tool loop", () => {
  it("without a terminal and without --approve, a call that needs approval is refused: the model reads the refusal, stderr says so once, the run store records it", async () => {
    const result = await run("approve.yaml", [erase("a"), erase("b"), "I could not erase them."], ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.outbox).toEqual([]);
    const report = JSON.parse(result.stdout) as { output: string; tool_calls: Array<{ name: string; error: string | null }> };
    expect(report.output).toBe("I could not erase them.");
    expect(report.tool_calls.map((call) => call.error)).toEqual([refusalText("erase"), refusalText("erase")]);
    // The model read the refusal as the tool's result, and could react to it.
    const second = (server!.requests[1]!.body.messages as WireMessage[]).at(-1)!;
    expect(second).toMatchObject({ role: "tool", content: `Error: ${refusalText("erase")}` });
    expect(result.stderr.match(/a tool that needs approval was refused: nobody can be asked here/g)).toHaveLength(1);
    const shown = await cli(["logs", "show", "last", "--json"], { env: { LLLM_HOME: result.home } });
    expect((JSON.parse(shown.stdout) as { tool_calls: Array<{ status: string }> }).tool_calls.map((call) => call.status)).toEqual(["refused", "refused"]);
  }, 300_000);

  it("--approve all runs them; --approve none refuses them without the warning", async () => {
    const approved = await run("approve.yaml", [erase("a"), "Erased."], ["--approve", "all"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.outbox).toEqual(["erased a"]);
    const refused = await run("approve.yaml", [erase("a"), "Not erased."], ["--approve", "none"]);
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.outbox).toEqual([]);
    expect(refused.stderr).toBe("");
  }, 300_000);

  it("require_approval makes a tool that declares nothing ask first", async () => {
    const result = await run("require.yaml", [{ tool_calls: [{ name: "lookup", arguments: { key: "x" } }] }, "Fine."], ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { tool_calls: Array<{ error: string | null }> }).tool_calls[0]!.error).toBe(refusalText("lookup"));
  }, 300_000);

  it("validate refuses a require_approval entry that names no tool of the tactic (exit 2, at its line)", async () => {
    const dir = tempDir("lllm-approve-");
    const file = path.join(dir, "typo.yaml");
    writeFileSync(file, `name: typo\npackages: [${path.join(fixtures, "runtree")}]\nrequire_approval: [erse]\nglobal:\n  model_name: gpt-test\n  tools: [lookup, erase]\nagent_configs:\n  - name: a\n    system_prompt: hi\n`);
    const result = await cli(["validate", file], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm: error: typo.yaml:3:20: require_approval names `erse`, which no agent of this tactic is offered");
    expect(result.stderr).toContain("did you mean `erase`?");
  }, 300_000);

  it("lllm batch asks nobody: refused by default, and it says so once", async () => {
    server = await startMockOpenAIServer({ script: [erase("a"), "No.", erase("b"), "No."] });
    const home = tempDir("lllm-home-");
    const inputs = path.join(home, "in.jsonl");
    const outbox = path.join(home, "outbox.txt");
    writeFileSync(inputs, '"one"\n"two"\n');
    const result = await cli(["batch", path.join(fixtures, "approve.yaml"), "--inputs", inputs, "--concurrency", "1", "--quiet"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_OUTBOX: outbox } });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(outbox)).toBe(false);
    expect(result.stderr.match(/`erase` needs approval and was refused: a batch asks nobody/g)).toHaveLength(1);
  }, 300_000);
});
