import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/** A busy machine can take long to start the CLI: a generous limit, since a passing run waits no longer than it must. */
const cli = (args: string[], options: CliOptions = {}): Promise<CliResult> => runCli(args, { timeoutMs: 120_000, ...options });

// `runCliInProcess` (the CLI's main() in this process): what an agent used as a tool does and says does not depend on
// being a process of its own. The first run and the first validate go through the built CLI (`cli`), end to end.

/** Agents as tools inside one tactic (`tools: [agent:summarizer]`), through the CLI against the mock server. */
const fixtures = path.join(ROOT, "test/fixtures/limits");
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type WireMessage = { role: string; content: string | null };
type WireTool = { function: { name: string; description: string; parameters: { properties: Record<string, unknown>; required: string[] } } };
const agentOf = (body: MockRequestBody): string => /^You are the (\w+)/.exec(String((body.messages?.[0] as WireMessage | undefined)?.content ?? ""))?.[1] ?? "?";
const requestsOf = (agent: string): MockRequestBody[] => server!.requests.filter((request) => request.method === "POST" && agentOf(request.body) === agent).map((request) => request.body);

describe("an agent as a tool of another agent of the same tactic", () => {
  it("runs the agent in a fresh dialog on {input} and returns its answer; parallel calls get a dialog each; its usage counts", async () => {
    let leadTurns = 0;
    server = await startMockOpenAIServer({
      handler: (body): ScriptedTurn => {
        const messages = (body.messages ?? []) as WireMessage[];
        if (agentOf(body) === "summarizer") return `summary of ${messages.at(-1)!.content}`;
        leadTurns += 1;
        if (leadTurns === 1) return { tool_calls: [{ name: "summarizer", arguments: { input: "the first text" } }, { name: "summarizer", arguments: { input: "the second text" } }] };
        return `Both: ${messages.filter((message) => message.role === "tool").map((message) => message.content).join(" / ")}`;
      },
    });
    const result = await cli(["run", path.join(fixtures, "team.yaml"), "--input", "Summarize both.", "--json"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; usage: { by_agent: Record<string, { model_calls: number }>; by_tool: Record<string, { calls: number; model_calls: number }> } };
    expect(report.output).toContain("summary of the first text");
    expect(report.output).toContain("summary of the second text");
    // The lead is offered the summarizer as a tool named after it, described by its description, taking {input}.
    const offered = (requestsOf("lead")[0]!.tools as WireTool[]).find((tool) => tool.function.name === "summarizer")!;
    expect(offered.function.description).toBe("Summarize a text in one line.");
    expect(offered.function.parameters.required).toEqual(["input"]);
    // Each call is a fresh dialog: the summarizer's system prompt and the input, with its own tools.
    const calls = requestsOf("summarizer");
    expect(calls.map((body) => (body.messages as WireMessage[]).map((message) => [message.role, message.content]))).toEqual(
      expect.arrayContaining([
        [["system", "You are the summarizer."], ["user", "the first text"]],
        [["system", "You are the summarizer."], ["user", "the second text"]],
      ]),
    );
    expect((calls[0]!.tools as WireTool[]).map((tool) => tool.function.name)).toEqual(["lookup"]);
    expect(report.usage.by_agent["summarizer"]!.model_calls).toBe(2);
    expect(report.usage.by_tool["summarizer"]).toMatchObject({ calls: 2, model_calls: 2 });
  }, 300_000);

  it("a limit met inside an agent used as a tool stops the whole run (exit 3): the caller does not read it as a failed tool", async () => {
    server = await startMockOpenAIServer({
      handler: (body): ScriptedTurn => {
        if (agentOf(body) === "summarizer") return { tool_calls: [{ name: "lookup", arguments: { key: "x" } }] };
        return { tool_calls: [{ name: "summarizer", arguments: { input: "a text" } }] };
      },
    });
    const result = await runCliInProcess(["run", path.join(fixtures, "team.yaml"), "--input", "Go.", "--max-tool-calls", "1", "--json"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: tempDir("lllm-home-") } });
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as { error: { code: string; message: string }; usage: { by_tool: Record<string, { calls: number; model_calls: number }> } };
    expect(report.error.code).toBe("limit_max_tool_calls");
    expect(report.error.message).toContain("`lookup` (agent `summarizer`) was not run");
    expect(report.usage.by_tool["summarizer"]).toMatchObject({ calls: 1, model_calls: 1 });
    expect(requestsOf("lead")).toHaveLength(1); // never asked again with an error to read
  }, 300_000);

  it("validate: `agent:` naming no agent, and a cycle, are errors at their line (exit 2); an agent nothing uses is a warning", async () => {
    const dir = tempDir("lllm-team-");
    const write = (name: string, agents: string): string => {
      const file = path.join(dir, name);
      writeFileSync(file, `name: t\nglobal:\n  model_name: gpt-test\n  system_prompt: hi\nagent_configs:\n${agents}`);
      return file;
    };
    const unknown = await cli(["validate", write("unknown.yaml", "  - name: lead\n    tools: [agent:sumarizer]\n  - name: summarizer\n")], { cwd: dir });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("lllm: error: unknown.yaml:7:13: `agent:sumarizer` in the tools of agent `lead` names no agent of this tactic");
    expect(unknown.stderr).toContain("did you mean `summarizer`?");

    const cycle = await runCliInProcess(["validate", write("cycle.yaml", "  - name: a\n    tools: [agent:b]\n  - name: b\n    tools: [agent:a]\n")], { cwd: dir });
    expect(cycle.code, cycle.stderr).toBe(2);
    expect(cycle.stderr).toContain("agents used as tools call each other in a cycle: `a` calls `b` calls `a`");
    expect(cycle.stderr).toMatch(/cycle\.yaml:\d+:\d+: agents used as tools/);

    const unused = await runCliInProcess(["validate", write("unused.yaml", "  - name: lead\n    tools: [agent:helper]\n  - name: helper\n  - name: idle\n")], { cwd: dir });
    expect(unused.code, unused.stderr).toBe(0);
    expect(unused.stderr).toBe("lllm: warning: unused.yaml:9:5: agent `idle` is not used: the pattern does not run it and no agent lists `agent:idle` in its tools\n");
    expect(unused.stdout).toContain("tools: agent:helper");
  }, 300_000);
});
