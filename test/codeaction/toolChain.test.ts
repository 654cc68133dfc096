import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { employees } from "../fixtures/codeaction/employees/data/directory.js";
import { emptyHome, ROOT, runCli } from "../helpers/runCli.js";

// Each case spawns the CLI, which runs a sandboxed script: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Tool = { function: { name: string; description: string; parameters: { properties: Record<string, unknown>; required: string[] } } };

describe("tool_chain", () => {
  it("lets an agent in the ordinary loop batch its tool calls into one script", async () => {
    const code = 'rows = [get_employee(name=n) for n in list_employees()]\nprint(sum(row["salary"] for row in rows if row["department"] == "Sales"))';
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "tool_chain", arguments: { code } }] }, "Done."] });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/chain.yaml"), "--input", "Sales payroll?", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const sales = employees(50).filter((employee) => employee.department === "Sales").reduce((sum, employee) => sum + employee.salary, 0);
    const report = JSON.parse(result.stdout) as { output: string; tool_calls: Array<{ name: string; result: unknown }>; tool_chains: Array<{ status: string; tool_calls: number }> };
    expect(report.output).toBe("Done.");
    expect(report.tool_calls).toMatchObject([{ name: "tool_chain", result: String(sales) }]);
    expect(report.tool_chains).toMatchObject([{ status: "ok", tool_calls: 51 }]);

    const first = server.requests.find((request) => request.method === "POST")!.body;
    const tools = first.tools as Tool[];
    expect(tools.map((tool) => tool.function.name)).toEqual(["list_employees", "get_employee", "export_directory", "count_rows", "send_email", "delete_employee", "tool_chain"]);
    const chain = tools.at(-1)!.function;
    expect(chain.parameters.required).toEqual(["code"]);
    expect(Object.keys(chain.parameters.properties)).toEqual(["code", "timeout"]);
    // The limit is said once: "(at most 20) (default: 20)" said it twice.
    expect(chain.parameters.properties.timeout).toEqual({ type: "number", description: "Seconds the script may run (at most 20, the default)" });
    expect(chain.description).toContain("def get_employee(name: str):");
    expect(chain.description).toContain("Each program has a cap on function calls.");
    expect(chain.description).not.toContain("57");
    const messages = (server.requests.filter((request) => request.method === "POST")[1]!.body.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)!.content).toContain(`---\n${sales}\n---`);
  });

  it("warns on stderr when a script reaches max_tool_calls, and the model gets the error", async () => {
    const code = "for i in range(100):\n    list_employees()\nprint('never')";
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "tool_chain", arguments: { code } }] }, "I could not finish."] });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/chain.yaml"), "--input", "List everyone a hundred times"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("lllm: warning: [analyst] tool_chain: the script reached max_tool_calls (the cap on each program's tool calls)");
    expect(result.stderr).not.toContain("57");
    const messages = (server.requests.filter((request) => request.method === "POST")[1]!.body.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)!.content).toContain("Error: the script reached its cap on function calls");
  });

  it("a script past its timeout is stopped, and the model reads a TimeoutError", async () => {
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "tool_chain", arguments: { code: "import time\ntime.sleep(60)", timeout: 1 } }] }, "Too slow."] });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/chain.yaml"), "--input", "Wait"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
    expect(result.code, result.stderr).toBe(0);
    const messages = (server.requests.filter((request) => request.method === "POST")[1]!.body.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)!.content).toContain("Error: TimeoutError: the script did not finish within 1 s and was stopped");
  });

  it("a tool_chain key that is neither true nor settings is a configuration error", async () => {
    const result = await runCli(["validate", path.join(ROOT, "test/fixtures/codeaction/bad-chain.yaml")]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("tool_chain");
  });
});
