import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BUDGET_REPAIR_PROMPT, CANNOT_FINISH } from "../../src/codeaction/index.js";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { employees } from "../fixtures/codeaction/employees/data/directory.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { orphanedProcesses } from "../helpers/processTree.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

// Each case runs the CLI, which runs one or more sandboxed programs: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

const fixtures = path.join(ROOT, "test/fixtures/codeaction");
let server: MockOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * The CLI against the mock model server, with its own LLLM_HOME and an outbox file for the side-effect tools: its
 * main() in this process, or the built CLI (`runCli`) where the processes are the point (the program's process tree
 * and memory, MCP servers left behind, stdout against stderr) and end to end.
 */
async function run(tactic: string, script: ScriptedTurn[], extra: string[] = [], cli = runCliInProcess): Promise<CliResult & { home: string; outbox: string }> {
  server = await startMockOpenAIServer({ script });
  const home = tempDir("lllm-home-");
  const outbox = path.join(home, "outbox.txt");
  const result = await cli(["run", path.join(fixtures, tactic), "--input", "What is the combined salary of everyone in Engineering?", ...extra], {
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_OUTBOX: outbox },
  });
  return { ...result, home, outbox };
}

/** Seed 002: "Prose-string tools still work — the model is told to parse them". */
const PROSE_RULE = "A function that returns prose (a str of text rather than data) must be parsed by your program: extract the fields and numbers you need in code (string methods, re), never by reading the text yourself.";
const python = (code: string): string => `Here is the program:\n\n\`\`\`python\n${code}\n\`\`\``;
type WireMessage = { role: string; content: string };
const requests = (): Array<{ messages: WireMessage[]; tools?: unknown[] }> => server!.requests.filter((request) => request.method === "POST").map((request) => request.body as never);
const outboxLines = (file: string): string[] => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : []);

const SALARY = `names = list_employees()
total = 0
for name in names:
    employee = get_employee(name=name)
    if employee["department"] == "Engineering":
        total += employee["salary"]
print(total)`;
const engineering = employees(50).filter((employee) => employee.department === "Engineering").reduce((sum, employee) => sum + employee.salary, 0);

describe("lllm run: code-action", () => {
  it("answers the seed's question over 50 employees with one program and one model call, exactly", async () => {
    const result = await run("salary.yaml", [python(SALARY)], ["--json"], runCli);
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; usage: { llm_calls: number }; code_action: { tool_calls: number; attempts: number; error: null; programs: Array<{ status: string; calls: Array<{ tool: string; status: string; arguments_digest: string; duration_ms: number }> }> } };
    expect(report.output).toBe(String(engineering));
    expect(report.usage.llm_calls).toBe(1);
    expect(report.code_action).toMatchObject({ tool_calls: 51, attempts: 1, error: null });
    expect(report.code_action.programs).toHaveLength(1);
    const calls = report.code_action.programs[0]!.calls;
    expect(calls).toHaveLength(51);
    expect(calls[1]).toMatchObject({ tool: "get_employee", status: "ok", arguments_digest: expect.stringMatching(/^[0-9a-f]{16}$/), duration_ms: expect.any(Number) });

    const [request] = requests();
    expect(request!.tools ?? []).toEqual([]); // the tools are functions of the program, not of the model
    const system = request!.messages[0]!.content;
    expect(system).toContain("You answer questions about the company.");
    expect(system).toContain('def get_employee(name: str):\n    """Return {name, department, salary} for an employee.');
    expect(system).toContain("Results are plain Python values: dicts, lists, numbers and strings.");
    expect(system).toContain(PROSE_RULE);
    expect(system).toContain("never skip, sample or truncate records, never count your own calls, and never stop early");
    expect(system).toContain("Each program has a cap on function calls.");
    expect(system).toContain("let it raise");
    expect(system).not.toContain("57"); // the cap's value
    expect(request!.messages[1]!.content).toBe("What is the combined salary of everyone in Engineering?");
  });

  it("passes a large result by reference from one tool to another, and keeps it under the run's folder", async () => {
    const result = await run("salary.yaml", [python("csv = export_directory()\nsummary = count_rows(csv=csv)\nfinal_answer({'kind': type(csv).__name__, 'large': csv.size > 4096, 'rows': summary['rows']})")], ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: unknown; run_id: string; artifacts: Array<{ ref: string; path: string; size: number; mime: string; source: string }> };
    expect(report.output).toEqual({ kind: "ToolResult", large: true, rows: 50 });
    expect(report.artifacts).toHaveLength(1);
    const [artifact] = report.artifacts;
    expect(artifact).toMatchObject({ mime: "text/plain", source: "export_directory" });
    // The folder is named by the run's id, the one `lllm logs show` takes.
    expect(artifact!.path.startsWith(path.join(result.home, "runs", report.run_id, "artifacts"))).toBe(true);
    expect(path.basename(path.dirname(artifact!.path))).toBe("artifacts");
    expect(readFileSync(artifact!.path, "utf8").split("\n")).toHaveLength(51);
  });

  it("a program that reaches the cap fails even when it catches ToolBudgetExceeded; the last one failing too is exit 3", async () => {
    const greedy = python(`total = 0
try:
    for name in list_employees():
        total += get_employee(name=name)["salary"]
except Exception:
    pass
print("partial", total)`);
    const result = await run("tight.yaml", [greedy, greedy]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("every program reached max_tool_calls");
    // Seed 002: a warning when each program reached the cap, logged as it happened.
    expect(result.stderr).toContain("lllm: warning: [analyst] code-action: program 1 reached max_tool_calls");
    expect(result.stderr).toContain("lllm: warning: [analyst] code-action: program 2 reached max_tool_calls");
    expect(result.stderr).toContain("2 programs tried");
    expect(result.stderr).toContain("code_action.max_tool_calls");
    expect(result.stderr).not.toMatch(/\b5\b/);
    const repair = requests()[1]!.messages.at(-1)!;
    expect(repair).toMatchObject({ role: "user", content: BUDGET_REPAIR_PROMPT });
    expect(repair.content).not.toMatch(/\d/);
  });

  it("stops with exit 3 when the model replies CANNOT_FINISH_WITHIN_CALL_CAP", async () => {
    const result = await run("tight.yaml", [python(SALARY), CANNOT_FINISH]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain(`the model replied ${CANNOT_FINISH}`);
    expect(result.stderr).toContain("max_tool_calls");
    expect(requests()).toHaveLength(2);
  });

  it("repairs a crashing program from the tail of its traceback", async () => {
    const broken = SALARY.replace('employee["salary"]', 'employee["salry"]');
    const result = await run("salary.yaml", [python(broken), python(SALARY)], ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; code_action: { attempts: number; tool_calls: number; programs: Array<{ status: string; error: string | null }> } };
    expect(report.output).toBe(String(engineering));
    expect(report.code_action.attempts).toBe(2);
    expect(report.code_action.programs.map((program) => program.status)).toEqual(["error", "ok"]);
    const repair = requests()[1]!.messages.at(-1)!.content;
    expect(repair).toMatch(/^The program failed:\n\nTraceback \(most recent call last\):\n[\s\S]*KeyError: 'salry'\n\nFix it and reply with the whole corrected program/);
    expect(repair).not.toContain("lllm_bridge"); // only the program's own frames
  });

  it("kills a program at exec_timeout, with every process it started (exit 3)", async () => {
    const result = await run("slow.yaml", [python('import subprocess, time\nsubprocess.Popen(["sleep", "4242"])\ntime.sleep(60)')], [], runCli);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain("did not finish within exec_timeout (1 s)");
    const sleepers = readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sleep\u00004242");
      } catch {
        return false;
      }
    });
    expect(sleepers).toEqual([]);
  });

  it("says on stderr, not stdout, when a program timed out or failed and the model is asked to repair it (a scripted model)", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "stuck.yaml"), `name: stuck\nbase: ${path.join(fixtures, "salary.yaml")}\ncode_action: {exec_timeout: 1, max_repairs: 2}\n`);
    const fenced = (code: string): string => `- |\n  \`\`\`python\n${code.split("\n").map((line) => `  ${line}`).join("\n")}\n  \`\`\`\n`;
    writeFileSync(path.join(dir, "turns.yaml"), fenced("while True: pass") + fenced('raise ValueError("oops")') + fenced("final_answer(42)"));
    const home = tempDir("lllm-home-");
    for (const json of [false, true]) {
      const result = await runCli(["run", "stuck.yaml", "--model", "scripted:turns.yaml", "--input", "go", ...(json ? ["--json"] : [])], { cwd: dir, env: { LLLM_HOME: home } });
      expect(result.code, result.stderr).toBe(0);
      if (json) expect(JSON.parse(result.stdout)).toMatchObject({ output: 42 });
      else expect(result.stdout).toBe("42\n");
      expect(result.stderr).toContain("lllm: code-action: program 1 did not finish within exec_timeout (1 s) and was killed; asking the model to repair it (repair 1 of 2)\n");
      expect(result.stderr).toContain("lllm: code-action: program 2 failed: ValueError: oops; asking the model to repair it (repair 2 of 2)\n");
    }
  });

  it("prints a failed program's error indented under its own line: the program cannot forge a line of lllm's", async () => {
    const forged = python("raise ValueError('oops\\nlllm: error: your OPENAI_API_KEY expired; paste it again')");
    const result = await run("salary.yaml", [forged, forged]);
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stderr.split("\n");
    expect(lines).toContain("lllm: error: code-action: the program failed and no repair is left (2 programs tried, max_repairs: 1):");
    expect(lines).toContain("  lllm: error: your OPENAI_API_KEY expired; paste it again");
    expect(lines.filter((line) => line.startsWith("lllm: error:"))).toHaveLength(1);
    // A resume would replay the model's programs to the same end: no `lllm run --resume` advice (the hint says what helps).
    expect(result.stderr).not.toContain("--resume");
  });

  it("lllm logs agrees with the run: programs that failed every repair are not marked resumable, and no resume command is given", async () => {
    const failing = python('raise ValueError("oops")');
    const result = await run("salary.yaml", [failing, failing]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toContain("--resume");
    const env = { LLLM_HOME: result.home };
    const listed = JSON.parse((await runCli(["logs", "--json"], { env })).stdout) as { runs: Array<{ id: string; status: string; error_code: string; resumable: boolean }> };
    expect(listed.runs).toHaveLength(1);
    expect(listed.runs[0]).toMatchObject({ status: "error", error_code: "code_action_failed", resumable: false });
    expect(listed.runs[0]).not.toHaveProperty("resume_command");
    const table = await runCliInProcess(["logs"], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).not.toContain("error *");
    expect(table.stderr).not.toContain("--resume");
    const shown = await runCliInProcess(["logs", "show", listed.runs[0]!.id], { env });
    expect(shown.stdout).not.toContain("--resume");
  });

  it("does not run a side-effect call twice when a repaired program repeats it", async () => {
    const first = python('send_email(to="ceo@example.com", body="report")\nraise ValueError("oops")');
    const second = python('print(send_email(to="ceo@example.com", body="report"), send_email(to="cfo@example.com", body="report"))');
    const result = await run("salary.yaml", [first, second], ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(outboxLines(result.outbox)).toEqual(["ceo@example.com: report", "cfo@example.com: report"]);
    const report = JSON.parse(result.stdout) as { output: string; code_action: { programs: Array<{ calls: Array<{ status: string }> }> } };
    expect(report.output).toBe("sent sent");
    expect(report.code_action.programs[1]!.calls.map((call) => call.status)).toEqual(["replayed", "ok"]);
  });

  it("refuses a tool that needs approval when nobody can approve (--approve none), and runs it with --approve all", async () => {
    const code = python('try:\n    print(delete_employee(name="Ada Lovelace"))\nexcept ToolApprovalDenied as error:\n    print("refused:", error)');
    const refused = await run("salary.yaml", [code]);
    expect(refused).toMatchObject({ code: 0, stdout: "refused: APPROVAL_DENIED: delete_employee needs approval, and the call was refused; it did not run\n" });
    expect(outboxLines(refused.outbox)).toEqual([]);
    const approved = await run("salary.yaml", [code], ["--approve", "all"]);
    expect(approved.stdout).toBe("deleted Ada Lovelace\n");
    expect(outboxLines(approved.outbox)).toEqual(["deleted Ada Lovelace"]);
  });

  it("gets an MCP tool's JSON text as data, other text as str, and its errors as seed 002's RuntimeError: MCPToolError: <code>: <message>", async () => {
    const code = python(`orders = list_orders(month="2026-09")
print(type(orders).__name__, sum(order["total"] for order in orders), count() + 1, repr(greet(name="Ada")))
for call in (lambda: find_order(id=7), fail):
    try:
        call()
    except MCPToolError as error:
        print(error.code, "|", error)
try:
    find_order(id=8)
except RuntimeError as error:
    print("RuntimeError |", error)
import traceback
try:
    fail()
except Exception:
    print(traceback.format_exc().splitlines()[-1])`);
    const result = await run("mcp.yaml", [code]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(
      [
        "list 29.5 43 'Hello, Ada!'",
        "NOT_FOUND | MCPToolError: NOT_FOUND: no order 7",
        "TOOL_ERROR | MCPToolError: TOOL_ERROR: disk on fire",
        "RuntimeError | MCPToolError: NOT_FOUND: no order 8",
        "RuntimeError: MCPToolError: TOOL_ERROR: disk on fire",
        "",
      ].join("\n"),
    );
  });
});

describe("lllm run: code-action, more from the CLI", () => {
  it("--json on a run that fails still prints the report: the error, the attempts, the programs", async () => {
    const loop = "for i in range(10):\n    list_employees()\nprint('done')";
    const result = await run("tight.yaml", [python(loop), python(loop)], ["--json"]);
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as { output: null; error: { code: string }; code_action: { attempts: number; error: string; programs: unknown[] } };
    expect(report.output).toBeNull();
    expect(report.code_action.attempts).toBe(2);
    expect(report.code_action.programs).toHaveLength(2);
    expect(report.code_action.error).toContain("max_tool_calls");
    expect(result.stdout).not.toMatch(/\b5\b.*calls/); // the cap's value is never given
  });

  it("the sandbox: keys of the tactic reach the program: memory_limit and output_size", async () => {
    const bomb = "x = bytearray(512 * 1024 * 1024)\nprint('allocated')";
    const memory = await run("limits.yaml", [python(bomb), python(bomb)], [], runCli);
    expect(memory.code, memory.stderr).toBe(1);
    expect(memory.stderr).toContain("MemoryError");
    const long = await run("limits.yaml", [python("print('y' * 5000)")]);
    expect(long.code, long.stderr).toBe(0);
    expect(long.stdout.trim().length).toBeLessThanOrEqual(1100);
    expect(long.stdout.trim().length).toBeGreaterThan(500);
  });

  it("an image an MCP server returns is in the result's .files (seed 001), a file the program can write out, and stays a reference in the answer", async () => {
    const program = `img = get_tiny_image()
image = img.files[0]
data = open(image.materialize(), "rb").read()
final_answer({"text": str(img), "files": len(img.files), "mime": image.mime, "png": data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", "same": len(data) == image.size, "image": image})`;
    // Spawned: a server the CLI left running would have a vitest parent in this process, and go unseen.
    const result = await run("everything.yaml", [python(program)], ["--json"], runCli);
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: Record<string, unknown>; artifacts: Array<{ ref: string; path: string; size: number; mime: string; source: string }> };
    const [stored] = report.artifacts;
    expect(report.artifacts).toHaveLength(1);
    expect(stored).toMatchObject({ mime: "image/png", source: "get-tiny-image" });
    expect(report.output).toEqual({ text: expect.stringMatching(/^Here's the image you requested:\n\[image image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/), files: 1, mime: "image/png", png: true, same: true, image: { $artifact: stored!.ref } });
    expect(readFileSync(stored!.path).subarray(0, 4).toString("latin1")).toBe("\x89PNG");
    expect(orphanedProcesses("server-everything/dist/index.js")).toEqual([]);
  });

  it("a program calls a real MCP server from npm (server-everything) and no server process is left", async () => {
    const program = "echoed = echo(message='hi')\nsums = [get_sum(a=a, b=b) for a, b in [(1, 2), (3, 4)]]\nfinal_answer({'echo': echoed, 'sums': sums})";
    const result = await run("everything.yaml", [python(program)], ["--json"], runCli); // spawned, as above
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: unknown; code_action: { tool_calls: number } };
    expect(report.code_action.tool_calls).toBe(3);
    expect(report.output).toMatchObject({ echo: expect.stringContaining("hi") });
    expect(JSON.stringify((report.output as { sums: unknown }).sums)).toMatch(/3.*7/);
    expect(orphanedProcesses("server-everything/dist/index.js")).toEqual([]);
  });
});
