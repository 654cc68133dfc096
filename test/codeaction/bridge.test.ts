import { existsSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { approveAll } from "../../src/codeaction/index.js";
import { McpToolError } from "../../src/mcp/index.js";
import { closeAllKernels } from "../../src/sandbox/index.js";
import { tool, toolResult } from "../../src/tools/index.js";
import { registerSecret } from "../../src/util/redact.js";
import { program, tempStore } from "./helpers.js";

// Each case runs sandboxed programs: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

afterAll(async () => {
  await closeAllKernels();
});

const seen: unknown[] = [];
const employee = tool({
  name: "get_employee",
  description: "Return {name, department, salary} for an employee.",
  parameters: { name: { type: "string" }, detail: { type: "boolean", default: false } },
  run: ({ name, detail }) => {
    if (name === "Nobody") throw new Error("no employee named Nobody");
    return { name, department: "Engineering", salary: 100, detail };
  },
});
const jsonText = tool({ name: "json_text", description: "Returns JSON as text.", run: () => '{"a": 1}' });
const mcpLike = tool({
  name: "lookup",
  description: "Fails like an MCP server's tool.",
  run: () => {
    throw new McpToolError("NOT_FOUND: no such record", { server: "db", tool: "lookup", mcpCode: "NOT_FOUND", mcpMessage: "no such record" });
  },
});
const big = tool({ name: "big", description: "A large result.", run: () => Array.from({ length: 400 }, (_, index) => ({ index, text: "x".repeat(20) })) });
const measure = tool({
  name: "measure",
  description: "Measures what it is given.",
  parameters: { data: { type: ["array", "string"] } },
  run: ({ data }) => {
    seen.push(data);
    return { length: (data as unknown[] | string).length };
  },
});
const risky = tool({ name: "risky", description: "Needs approval.", approval: "required", run: () => "done" });
const tools = [employee, jsonText, mcpLike, big, measure, risky];

describe("a program's tools", () => {
  it("are bare functions and tools.<name>, positional or keyword; results are Python values; text stays text", async () => {
    const outcome = await program(
      `a = get_employee("Ada")
b = tools.get_employee(name="Bo", detail=True)
print(a["salary"] + b["salary"], type(a).__name__, b["detail"], repr(json_text()))`,
      tools,
    );
    expect(outcome.status).toBe("ok");
    expect(outcome.answer).toBe("200 dict True '{\"a\": 1}'");
    expect(outcome.bridge.calls.map((call) => call.status)).toEqual(["ok", "ok", "ok"]);
    expect(outcome.bridge.calls[0]!.argumentsDigest).toMatch(/^[0-9a-f]{16}$/);
  });

  it("raise the tool's error with its code and message; MCP errors as seed 002's RuntimeError: MCPToolError: <code>: <message>", async () => {
    const outcome = await program(
      `for call in (lambda: get_employee("Nobody"), lambda: get_employee(nam="x"), lambda: lookup(), lambda: tools.nope()):
    try:
        call()
    except ToolError as error:
        print(type(error).__name__, error.code, "|", error)
lookup()`,
      tools,
    );
    const lines = outcome.output.split("\n");
    expect(lines[0]).toBe("ToolError TOOL_FAILED | TOOL_FAILED: no employee named Nobody");
    expect(lines[1]).toMatch(/^ToolError INVALID_ARGUMENTS \| INVALID_ARGUMENTS: Invalid arguments for get_employee: /);
    expect(lines[2]).toBe("MCPToolError NOT_FOUND | MCPToolError: NOT_FOUND: no such record");
    expect(lines[3]).toMatch(/^ToolError UNKNOWN_TOOL \| UNKNOWN_TOOL: there is no function named nope; the functions are: big, get_employee, /);
    expect(outcome.status).toBe("error");
    expect(outcome.error).toMatch(/lookup\(\)\nRuntimeError: MCPToolError: NOT_FOUND: no such record$/);
    expect(outcome.bridge.toolCalls).toBe(5); // failed and unknown calls count
  });

  it("give final_answer's value, structured", async () => {
    const outcome = await program('print("ignored")\nfinal_answer({"total": 3, "names": ["a"]})\nprint("not reached")', tools);
    expect(outcome).toMatchObject({ status: "ok", answer: { total: 3, names: ["a"] } });
  });

  it("allow exactly max_tool_calls calls; the next and every later one raises ToolBudgetExceeded, and the output is discarded even if caught", async () => {
    const outcome = await program(
      `errors = 0
for n in range(6):
    try:
        get_employee(str(n))
    except ToolBudgetExceeded as error:
        errors += 1
        message = str(error)
print("partial answer", errors, message)`,
      tools,
      { maxToolCalls: 3 },
    );
    expect(outcome.status).toBe("budget");
    expect(outcome.answer).toBeUndefined();
    expect(outcome.output).toContain("partial answer 3 this program reached its cap on function calls");
    expect(outcome.output.split("partial answer 3 ")[1]).not.toMatch(/\d/); // the cap's value is never given
    expect(outcome.bridge.calls.map((call) => call.status)).toEqual(["ok", "ok", "ok", "budget_exceeded", "budget_exceeded", "budget_exceeded"]);
    expect(outcome.bridge.toolCalls).toBe(3);
  });

  it("refuse a tool that needs approval unless the policy approves, and count the refusal", async () => {
    const code = 'try:\n    print(risky())\nexcept ToolApprovalDenied as error:\n    print("refused", error.code)';
    const refused = await program(code, tools);
    expect(refused).toMatchObject({ status: "ok", answer: "refused APPROVAL_DENIED" });
    expect(refused.bridge.calls[0]!.status).toBe("denied");
    expect(refused.bridge.toolCalls).toBe(1);
    const approved = await program(code, tools, { approval: approveAll });
    expect(approved.answer).toBe("done");
  });
});

describe("pass by reference", () => {
  it("hands a large result over as a handle that behaves like its value; passing it sends only the ref", async () => {
    seen.length = 0;
    const artifacts = tempStore();
    const outcome = await program(
      `rows = big()
print(type(rows).__name__, rows.size > 4096, rows.mime, rows.text[:12], len(rows), rows[2]["index"], sum(1 for _ in rows))
print(measure(data=rows)["length"], rows.ref.startswith("a"))
path = rows.materialize()
import json, os
print(path.startswith("/workspace/artifact_"), len(json.load(open(path))), os.path.getsize(path) == rows.size)
open("report.csv", "w").write("a,b\\n1,2\\n")
stored = artifacts.put("report.csv", "text/csv")
print(measure(data=stored)["length"], stored.text)`,
      [big, measure],
      { artifacts },
    );
    expect(outcome.output).toBe('ToolResult True application/json [{"index":0, 400 2 400\n400 True\nTrue 400 True\n8 a,b\n1,2\n\n');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toHaveLength(400); // the tool got the whole value from the store
    expect(seen[1]).toBe("a,b\n1,2\n");
    const records = artifacts.list();
    expect(records.map((record) => [record.source, record.mime])).toEqual([["big", "application/json"], ["artifacts.put", "text/csv"]]);
    expect(records[1]!.path.endsWith(".csv")).toBe(true);
    expect(JSON.parse(readFileSync(records[0]!.path, "utf8"))).toHaveLength(400);
    expect(existsSync(records[1]!.path)).toBe(true);
  });

  it("a ref the run does not hold is an argument error", async () => {
    const outcome = await program('print(measure(data={"$artifact": "a0000"}))', [measure]);
    expect(outcome.error).toMatch(/ToolError: INVALID_ARGUMENTS: no artifact "a0000" in this run/);
  });
});

describe("media a tool returns (seed 001's .files)", () => {
  const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"); // the start of a PNG file
  const chart = tool({
    name: "chart",
    description: "A chart, its data, and a link to more.",
    run: () =>
      toolResult({
        content: [
          { type: "text", text: "A chart of 3 points" },
          { type: "image", data: PNG, mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///data/points.csv", mimeType: "text/csv", text: "x,y\n1,2\n" } },
          { type: "resource_link", uri: "https://example.com/full.csv", name: "full.csv" },
        ],
      }),
  });
  const summary = tool({ name: "summary", description: "Data and a picture.", run: () => toolResult({ structuredContent: { points: 3 }, content: [{ type: "text", text: "3 points" }, { type: "audio", data: "AAAA", mimeType: "audio/wav" }] }) });

  it("are file handles in .files: images, audio and embedded resources stored as artifacts, links as dicts; the text stays the value", async () => {
    const artifacts = tempStore();
    const outcome = await program(
      `r = chart()
print(type(r).__name__, r.splitlines()[0], len(r.files))
image, table, link = r.files
print(type(image).__name__, image.mime, image.size, open(image.materialize(), "rb").read()[:4] == b"\\x89PNG")
print(table.mime, repr(table.load()))
print(link)
s = summary()
print(s["points"], s.structured, [(f.mime, f.size) for f in s.files])
final_answer({"image": image, "link": link})`,
      [chart, summary],
      { artifacts },
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toBe(
      [
        "str A chart of 3 points 3",
        "ToolResult image/png 16 True",
        "text/csv 'x,y\\n1,2\\n'",
        "{'type': 'resource_link', 'uri': 'https://example.com/full.csv', 'name': 'full.csv'}",
        "3 {'points': 3} [('audio/wav', 3)]",
        "",
      ].join("\n"),
    );
    const stored = artifacts.list();
    expect(stored.map((record) => [record.source, record.mime, record.size])).toEqual([["chart", "image/png", 16], ["chart", "text/csv", 8], ["summary", "audio/wav", 3]]);
    expect(readFileSync(stored[0]!.path)).toEqual(PNG);
    expect(stored[1]!.path.endsWith(".csv")).toBe(true);
    expect(outcome.answer).toEqual({ image: { $artifact: stored[0]!.ref }, link: { type: "resource_link", uri: "https://example.com/full.csv", name: "full.csv" } });
  });
});

describe("a program without tools", () => {
  it("still runs, with final_answer", async () => {
    expect(await program("final_answer(sum(range(10)))", [])).toMatchObject({ status: "ok", answer: 45 });
  });
});

describe("a program's tool results", () => {
  it("hold no key lllm knows of: the program, and so the model, never reads one", async () => {
    const key = "sk-bridge-secret-7f3a9c21d4e8";
    registerSecret(key);
    const leaky = tool({ name: "leaky", description: "Echoes its credentials.", run: () => ({ token: key, nested: [`Bearer ${key}`] }) });
    const failing = tool({ name: "failing", description: "Fails naming its key.", run: () => { throw new Error(`denied for ${key}`); } });
    const outcome = await program(`print(leaky())\ntry:\n    failing()\nexcept Exception as error:\n    print(error)`, [leaky, failing]);
    expect(outcome.status).toBe("ok");
    expect(outcome.answer).not.toContain(key);
    expect(outcome.answer).toContain("'token': '[redacted]'");
    expect(outcome.answer).toContain("denied for [redacted]");
  });
});
