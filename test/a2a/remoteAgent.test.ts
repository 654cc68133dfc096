import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskState } from "@a2a-js/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { startA2aAgent, type A2aAgent } from "../helpers/a2aAgent.js";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 120_000 });

// lllm as an A2A client: a tactic's agent calls a remote agent's skills as tools. The remote agent is written with
// the official SDK in the test (test/helpers/a2aAgent.ts); the tactic's model is the mock. The first run and the first
// validate go through the built CLI as a user runs it; the others run its main() in this process (nothing they check
// depends on being a process of its own).
type WireMessage = { role: string; content?: string | null; tool_call_id?: string };
type WireTool = { function: { name: string; description: string; parameters: { properties: Record<string, unknown>; required: string[] } } };
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let agent: A2aAgent | undefined;

const lastOf = (body: MockRequestBody): WireMessage => (body.messages as WireMessage[]).at(-1)!;
const toolsOf = (body: MockRequestBody): WireTool[] => (body.tools ?? []) as WireTool[];

/** A tactic whose agent has `tools` and `extra` YAML (remote_agents:, limits:). */
function tactic(tools: string[], extra = ""): string {
  return `${tempTree({ "front.yaml": `name: front\nprompt: "{input}"\n${extra}agent_configs:\n  - name: desk\n    system_prompt: You help.\n    model_name: gpt-test\n    invoker_config: {base_url: "${mock.url}"}\n    tools: ${JSON.stringify(tools)}\n` })}/front.yaml`;
}

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
});

afterEach(async () => {
  await agent?.close();
  agent = undefined;
});

afterAll(async () => {
  await mock?.close();
});

describe("a remote A2A agent as tools", () => {
  it("tools: [a2a:URL] offers each skill as a tool; a call streams the task (its progress shown with --verbose) and the model reads the answer", async () => {
    agent = await startA2aAgent({
      name: "pricing",
      skills: [{ id: "quote", description: "Quotes a price." }, { id: "stock", description: "Says what is in stock." }],
      behavior: (turn) => {
        turn.status(TaskState.TASK_STATE_WORKING, "looking it up");
        turn.artifact(`${turn.skill}: figs are `, { last: false });
        turn.artifact("3 EUR", { append: true, last: true });
        turn.status(TaskState.TASK_STATE_COMPLETED);
      },
    });
    answer = (body) => (lastOf(body).role === "tool" ? `Answer: ${lastOf(body).content}` : { tool_calls: [{ name: "quote", arguments: { message: "price of figs" } }] });
    const file = tactic([`a2a:${agent.url}`]);
    const result = await runCli(["run", file, "--input", "figs?", "--verbose"]);
    expect(result.stderr).toContain("lllm: pricing/quote [info] looking it up");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: [\s\S]*\nquote: figs are 3 EUR\n/);
    expect(agent.received).toEqual([{ text: "price of figs", skill: "quote", authorization: undefined }]);
    const offered = toolsOf(mock.requests.at(-2)!.body);
    expect(offered.map((tool) => [tool.function.name, tool.function.description])).toEqual([
      ["quote", "Quotes a price. (the remote agent pricing, over A2A)."],
      ["stock", "Says what is in stock. (the remote agent pricing, over A2A)."],
    ]);
    expect(offered[0]!.function.parameters.required).toEqual(["message"]);
    // Without --verbose, the remote task's progress is not printed.
    const quiet = await runCliInProcess(["run", file, "--input", "figs?"]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain("looking it up");
  });

  it("remote_agents: with token_env sends the token to the agent (never printing it); without the variable, a clear error (exit 2)", async () => {
    agent = await startA2aAgent({ name: "vault", token: "remote-token-5150", skills: [{ id: "secret_count", description: "Counts." }], behavior: (turn) => (turn.artifact("42"), turn.status(TaskState.TASK_STATE_COMPLETED)) });
    answer = (body) => (lastOf(body).role === "tool" ? `Count: ${lastOf(body).content}` : { tool_calls: [{ name: "vault_secret_count", arguments: { message: "count" } }] });
    const file = tactic([], `remote_agents:\n  - name: vault\n    url: ${agent.url}/.well-known/agent-card.json\n    token_env: VAULT_TOKEN\n    prefix: vault_\n`);
    const missing = await runCliInProcess(["run", file, "--input", "count"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("the remote agent `vault` wants the token in $VAULT_TOKEN, which is not set");
    const result = await runCliInProcess(["run", file, "--input", "count", "--json"], { env: { VAULT_TOKEN: "remote-token-5150" } });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ output: expect.stringContaining("Count:") });
    expect(agent.received.map((entry) => entry.authorization)).toEqual(["Bearer remote-token-5150"]);
    expect(result.stdout + result.stderr).not.toContain("remote-token-5150");
    // Nor in the model's requests.
    expect(JSON.stringify(mock.requests.slice(-2))).not.toContain("remote-token-5150");
  });

  it("a card that puts its endpoint on another origin is refused (exit 2), unless endpoint_origins names it: then the calls and the token go there", async () => {
    // The agent that runs the tasks (origin B), and a card for it served from origin A, the one configured.
    agent = await startA2aAgent({ name: "elsewhere", skills: [{ id: "count", description: "Counts." }], behavior: (turn) => (turn.artifact("42"), turn.status(TaskState.TASK_STATE_COMPLETED)) });
    const card = await (await fetch(`${agent.url}/.well-known/agent-card.json`)).text();
    const cardSeen: Array<string | undefined> = [];
    const cardHost = createServer((request, response) => {
      cardSeen.push(request.headers.authorization);
      response.writeHead(200, { "content-type": "application/json" }).end(card);
    });
    await new Promise<void>((resolve) => cardHost.listen(0, "127.0.0.1", resolve));
    try {
      const cardOrigin = `http://127.0.0.1:${(cardHost.address() as AddressInfo).port}`;
      const cardUrl = `${cardOrigin}/.well-known/agent-card.json`;
      answer = (body) => (lastOf(body).role === "tool" ? `Count: ${lastOf(body).content}` : { tool_calls: [{ name: "count", arguments: { message: "count" } }] });
      const env = { COUNTER_TOKEN: "counter-token-8086" };
      const refused = await runCliInProcess(["run", tactic([], `remote_agents:\n  - name: counter\n    url: ${cardUrl}\n    token_env: COUNTER_TOKEN\n`), "--input", "count"], { env });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`the card of the remote agent \`counter\` (${cardUrl}) names its endpoint on another origin, ${agent.url}: lllm sends a tactic's messages and token only to the origin it names`);
      expect(refused.stderr).toContain(`endpoint_origins: [${agent.url}]`);
      expect(refused.stderr).not.toContain("counter-token-8086");
      // The short form too (no token, but the model's messages would go to a host the tactic never named).
      const short = await runCliInProcess(["run", tactic([`a2a:${cardUrl}`]), "--input", "count"]);
      expect(short.code, short.stderr).toBe(2);
      expect(short.stderr).toContain(`names its endpoint on another origin, ${agent.url}`);
      expect(agent.received).toEqual([]);
      expect(cardSeen).toEqual(["Bearer counter-token-8086", undefined]);
      // Named by the tactic: trusted with the calls and the token.
      const named = await runCliInProcess(["run", tactic([], `remote_agents:\n  - name: counter\n    url: ${cardUrl}\n    token_env: COUNTER_TOKEN\n    endpoint_origins: [${agent.url}]\n`), "--input", "count"], { env });
      expect(named.code, named.stderr).toBe(0);
      expect(agent.received).toEqual([{ text: "count", skill: "count", authorization: "Bearer counter-token-8086" }]);
    } finally {
      await new Promise<void>((resolve) => cardHost.close(() => resolve()));
    }
  });

  it("an agent that asks for input: the model gets its question and the task id, answers on the same task", async () => {
    agent = await startA2aAgent({
      name: "booking",
      skills: [{ id: "book", description: "Books a table." }],
      behavior: (turn) => {
        if (!turn.continues) return turn.status(TaskState.TASK_STATE_INPUT_REQUIRED, "For how many people?");
        turn.artifact(`Booked for ${turn.text}.`);
        turn.status(TaskState.TASK_STATE_COMPLETED);
      },
    });
    let taskId = "";
    answer = (body) => {
      const last = lastOf(body);
      if (last.role !== "tool") return { tool_calls: [{ name: "book", arguments: { message: "a table tonight" } }] };
      const asked = /task_id "([^"]+)"/.exec(last.content ?? "");
      if (asked) {
        taskId = asked[1]!;
        return { tool_calls: [{ name: "book", arguments: { message: "two", task_id: taskId } }] };
      }
      return `Done: ${last.content}`;
    };
    const result = await runCliInProcess(["run", tactic([`a2a:${agent.url}`]), "--input", "book"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Done: [\s\S]*Booked for two\./);
    expect(taskId).not.toBe("");
    const asked = mock.requests.map((request) => lastOf(request.body).content ?? "").find((text) => text.includes("needs more input"));
    expect(asked).toContain("The agent needs more input: For how many people?");
  });

  it("a failed remote task is an error the model reads, not a crash", async () => {
    agent = await startA2aAgent({ name: "flaky", skills: [{ id: "work", description: "Works." }], behavior: (turn) => turn.status(TaskState.TASK_STATE_FAILED, "the warehouse is closed") });
    answer = (body) => (lastOf(body).role === "tool" ? `Sorry: ${lastOf(body).content}` : { tool_calls: [{ name: "work", arguments: { message: "go" } }] });
    const result = await runCliInProcess(["run", tactic([`a2a:${agent.url}`]), "--input", "go"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("the remote agent `flaky` (work) failed: the warehouse is closed");

  });

  it("runs under the run's limits: a remote task that never ends is stopped by max_duration (exit 3) and cancelled", async () => {
    let cancelled = false;
    agent = await startA2aAgent({
      name: "slow",
      skills: [{ id: "wait", description: "Waits." }],
      behavior: (turn) =>
        new Promise<void>((resolve) => {
          turn.status(TaskState.TASK_STATE_WORKING, "waiting");
          turn.cancelled.addEventListener("abort", () => ((cancelled = true), resolve()));
        }),
    });
    answer = () => ({ tool_calls: [{ name: "wait", arguments: { message: "forever" } }] });
    const result = await runCliInProcess(["run", tactic([`a2a:${agent.url}`], "limits: {max_duration: 3}\n"), "--input", "wait"]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain("max_duration");
    expect(agent.received).toHaveLength(1);
    // The remote task was cancelled too (tasks/cancel), not left running.
    expect(cancelled).toBe(true);
  });

  it("a2a: with something else than a URL is a configuration error naming the file and line; an unreachable agent fails the start", async () => {
    const bad = await runCli(["validate", tactic(["a2a:ftp//nowhere"])]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/front\.yaml:\d+:\d+/);
    expect(bad.stderr).toContain("`a2a:ftp//nowhere` does not name an A2A agent");
    // validate names the remote agents an agent will have (their tools are known once the cards are read).
    const listed = await runCliInProcess(["validate", tactic(["a2a:http://127.0.0.1:9/"], "remote_agents:\n  - name: vault\n    url: http://127.0.0.1:8/\n")]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("    remote agents: vault (http://127.0.0.1:8/), 127.0.0.1:9 (http://127.0.0.1:9/)\n");
    answer = () => "unused";
    const away = await runCliInProcess(["run", tactic(["a2a:http://127.0.0.1:9/"]), "--input", "x"]);
    expect(away.code, away.stderr).toBe(2);
    expect(away.stderr).toContain("cannot use the remote agent `127.0.0.1:9` at http://127.0.0.1:9/");
  });
});
