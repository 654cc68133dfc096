import { afterAll, describe, expect, it } from "vitest";
import { Agent, type AgentEvent } from "../../src/agent/index.js";
import { approveNone, CANNOT_FINISH, CodeActionBudgetError, CodeActionError, CodeActionTimeoutError, codeActionAgent, runCodeAction, runProgram } from "../../src/codeaction/index.js";
import { BudgetError } from "../../src/errors.js";
import { Prompt } from "../../src/prompts/index.js";
import { closeAllKernels } from "../../src/sandbox/index.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { tool } from "../../src/tools/index.js";
import { FAST, tempStore } from "./helpers.js";

afterAll(async () => {
  await closeAllKernels();
});

const count = tool({ name: "count", description: "Counts", parameters: { n: { type: "integer" } }, run: ({ n }) => n });

function setup(turns: string[], options: { maxRepairs?: number; maxToolCalls?: number } = {}) {
  const model = new ScriptedModel(turns);
  const events: AgentEvent[] = [];
  const base = new Agent({ name: "coder", systemPrompt: new Prompt({ path: "coder/system", prompt: "You count things for {who}.", functionList: [count] }), model, onEvent: (event) => events.push(event) });
  const { agent, tools } = codeActionAgent(base);
  const run = runCodeAction({
    agent,
    tools,
    task: "Count to three.",
    promptArgs: { who: "the tests" },
    settings: { execTimeout: 120, maxRepairs: options.maxRepairs ?? 1, maxToolCalls: options.maxToolCalls ?? 10 },
    isolation: { backend: FAST },
    maxOutputChars: 10_000,
    artifacts: tempStore(),
  });
  return { model, events, run };
}

describe("runCodeAction", () => {
  it("fills the system prompt's placeholders, offers no tools to the model, and makes no call after a good program", async () => {
    const { model, run } = setup(["```python\nprint(count(n=3))\n```"]);
    expect((await run).output).toBe("3");
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.messages[0]!.content).toMatch(/^You count things for the tests\.\n\nAnswer by writing one Python program/);
    expect(model.requests[0]!.tools).toBeUndefined();
  });

  it("a crash with no repair left is a CodeActionError (exit 1) carrying the report and the traceback's tail", async () => {
    const { run } = setup(["```python\ncount(n=1)\nraise ValueError('bad parse')\n```"], { maxRepairs: 0 });
    const error = (await run.catch((caught: unknown) => caught)) as CodeActionError;
    expect(error).toBeInstanceOf(CodeActionError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toMatch(/no repair is left \(1 program tried, max_repairs: 0\):\n  Traceback[\s\S]*ValueError: bad parse$/);
    // The program's text is indented under lllm's line: none of its lines starts at the margin.
    expect(error.message.split("\n").slice(1).every((line) => line.startsWith("  "))).toBe(true);
    expect(error.report).toMatchObject({ attempts: 1, toolCalls: 1, error: expect.stringContaining("ValueError: bad parse"), programs: [{ status: "error", toolCalls: 1 }] });
  });

  it("asks again when a program gives no answer", async () => {
    const { model, run } = setup(["```python\nx = count(n=2)\n```", "```python\nprint(count(n=2))\n```"]);
    expect((await run).output).toBe("2");
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("finished without printing anything or calling final_answer(value)");
  });

  it("warns when the answer comes from a program written after a budget hit; the error carries the cap for the caller", async () => {
    const greedy = "```python\nfor n in range(20):\n    count(n=n)\nprint('never')\n```";
    const ok = setup([greedy, "```python\nprint(count(n=20))\n```"], { maxToolCalls: 5 });
    expect((await ok.run).output).toBe("20");
    expect(ok.events.filter((event) => event.type === "warning").map((event) => (event as { message: string }).message)).toEqual([
      "code-action: program 1 reached max_tool_calls (the cap on each program's tool calls); its later calls are refused and its output will be discarded",
      "code-action: the answer comes from a program written after an earlier one reached max_tool_calls",
    ]);
    const failing = setup([greedy, greedy], { maxToolCalls: 5 });
    const error = (await failing.run.catch((caught: unknown) => caught)) as CodeActionBudgetError;
    expect(error).toBeInstanceOf(CodeActionBudgetError);
    expect(error).toMatchObject({ exitCode: 3, maxToolCalls: 5, attempts: 2 });
    expect(error.message).not.toContain("5");
    expect(error.report.programs.map((program) => program.status)).toEqual(["budget", "budget"]);
  });
});

describe("code-action errors (seed 002)", () => {
  it("the budget and timeout errors are code-action errors, so one handler catches all; exit 3 stays a BudgetError", async () => {
    const greedy = "```python\nfor n in range(20):\n    count(n=n)\n```";
    const budget = (await setup([greedy], { maxRepairs: 0, maxToolCalls: 2 }).run.catch((caught: unknown) => caught)) as CodeActionBudgetError;
    expect(budget).toBeInstanceOf(CodeActionBudgetError);
    expect(budget).toBeInstanceOf(CodeActionError);
    expect(budget).toBeInstanceOf(BudgetError);
    expect(budget).toMatchObject({ exitCode: 3, code: "code_action_budget", maxToolCalls: 2, attempts: 1 });
    const timeout = new CodeActionTimeoutError("late", { execTimeout: 1, attempts: 1, report: budget.report });
    expect(timeout).toBeInstanceOf(CodeActionError);
    expect(timeout).toBeInstanceOf(BudgetError);
    expect(timeout.exitCode).toBe(3);
    const crash = new CodeActionError("crash", { attempts: 1, report: budget.report });
    expect(crash).not.toBeInstanceOf(BudgetError);
    expect(crash.exitCode).toBe(1);
  });

  it("after CANNOT_FINISH_WITHIN_CALL_CAP the report's error names max_tool_calls", async () => {
    const greedy = "```python\nfor n in range(20):\n    count(n=n)\n```";
    const error = (await setup([greedy, CANNOT_FINISH], { maxToolCalls: 2 }).run.catch((caught: unknown) => caught)) as CodeActionBudgetError;
    expect(error).toBeInstanceOf(CodeActionBudgetError);
    expect(error.report.error).toContain("max_tool_calls");
    expect(error.report.error).toContain(CANNOT_FINISH);
    expect(error.report.error).not.toContain("2");
  });

  it("warns the moment a program reaches max_tool_calls, while the program still runs", async () => {
    let warned: (message: string) => void = () => {};
    const warning = new Promise<string>((resolve) => (warned = resolve));
    const controller = new AbortController();
    // The program catches the refusal and then waits: a warning given only at the end would never come in time.
    const code = "import time\ntry:\n    for n in range(20):\n        count(n=n)\nexcept ToolBudgetExceeded:\n    pass\ntime.sleep(120)";
    const running = runProgram(code, { tools: [count], maxToolCalls: 3, execTimeout: 150, isolation: { backend: FAST }, maxOutputChars: 1000, approval: approveNone, artifacts: tempStore(), context: {}, signal: controller.signal, label: "tool_chain: the script", onWarning: warned });
    const settled = running.then(() => "finished", () => "stopped");
    expect(await warning).toBe("tool_chain: the script reached max_tool_calls (the cap on each program's tool calls); its later calls are refused and its output will be discarded");
    controller.abort();
    expect(await settled).toBe("stopped");
  }, 60_000);
});
