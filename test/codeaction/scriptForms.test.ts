import { afterAll, describe, expect, it, vi } from "vitest";
import { closeAllKernels } from "../../src/sandbox/index.js";
import { tool } from "../../src/tools/index.js";
import { program, tempStore } from "./helpers.js";

// Each case runs sandboxed programs: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// Seed 001's script API beside seed 002's: a model that follows either seed's examples must not fail.
afterAll(async () => {
  await closeAllKernels();
});

const seen: unknown[] = [];
const queryDb = tool({
  name: "query_db",
  description: "Rows of a query.",
  parameters: { query: { type: "string" } },
  run: ({ query }) => (String(query).includes("LIMIT 1000") ? Array.from({ length: 300 }, (_, index) => ({ id: index, kind: "event" })) : [{ id: 1, kind: "event" }]),
});
const analysis = tool({
  name: "analysis_tool",
  description: "Summarises data.",
  parameters: { data: { type: ["array", "string"] } },
  run: ({ data }) => {
    seen.push(data);
    return `${(data as unknown[]).length} events`;
  },
});
const count = tool({ name: "count", description: "A number.", run: () => 7 });
const greet = tool({ name: "greet", description: "A string.", run: () => "hello" });
const flag = tool({ name: "flag", description: "A boolean.", run: () => true });
const tools = [queryDb, analysis, count, greet, flag];

describe("seed 001's script forms", () => {
  it("runs seed 001's example: pass by reference, await data.materialize(), artifacts.put, and a top-level return as the answer", async () => {
    seen.length = 0;
    const artifacts = tempStore();
    const outcome = await program(
      `data = tools.query_db(query="SELECT * FROM events LIMIT 1000")
summary = tools.analysis_tool(data=data)
path = await data.materialize()
import json
rows = json.load(open(path))
open("/workspace/chart.png", "wb").write(b"\\x89PNG fake")
chart_ref = artifacts.put("/workspace/chart.png", "image/png")
return {"summary": summary.text, "rows": len(rows), "chart": chart_ref, "files": data.files, "structured": len(data.structured)}`,
      tools,
      { artifacts },
    );
    expect(outcome.error).toBeUndefined();
    // The chart stays a reference in the returned dict (seed 001's `"chart": chart_ref`), not its bytes pasted in.
    const chart = artifacts.list().find((record) => record.source === "artifacts.put")!;
    expect(chart).toMatchObject({ mime: "image/png", size: 9 });
    expect(outcome).toMatchObject({ status: "ok", answer: { summary: "300 events", rows: 300, chart: { $artifact: chart.ref }, files: [], structured: 300 } });
    expect(outcome.output).toBe(""); // ending inside top-level await leaves no noise from asyncio
    expect(seen[0]).toHaveLength(300); // the handle went to the tool by reference
  });

  it("references stay references in what a program returns, at any depth; an answer that is one large value is that value", async () => {
    const artifacts = tempStore();
    const nested = await program('data = tools.query_db(query="SELECT * FROM events LIMIT 1000")\nreturn {"data": data, "all": [data], "n": len(data)}', tools, { artifacts });
    expect(nested.error).toBeUndefined();
    const [stored] = artifacts.list();
    expect(stored).toMatchObject({ source: "query_db", mime: "application/json" });
    expect(nested.answer).toEqual({ data: { $artifact: stored!.ref }, all: [{ $artifact: stored!.ref }], n: 300 });
    const whole = await program('return tools.query_db(query="SELECT * FROM events LIMIT 1000")', tools);
    expect(whole.answer).toHaveLength(300);
    const fake = await program('return {"chart": {"$artifact": "a0000"}}', tools);
    expect(fake.error).toMatch(/KeyError: 'no artifact "a0000" in this run/);
  });

  it("a small result is its plain value (seed 002) and has seed 001's .text, .structured, .ref and .files", async () => {
    const outcome = await program(
      `rows = query_db(query="one")
n = count()
s = greet()
print(type(rows).__name__, isinstance(rows, list), rows == [{"id": 1, "kind": "event"}], rows[0]["kind"])
print(rows.text, rows.structured == rows, rows.ref, rows.files)
print(n + 1, n.text, n.structured, type(n).__name__)
print(s.upper(), s.text, s.structured, repr(s))
import json
print(json.dumps({"rows": rows, "n": n, "s": s}))
print(flag())
import copy, pickle
print(pickle.loads(pickle.dumps(rows)) == rows, type(copy.deepcopy(s)) is str, pickle.loads(pickle.dumps(n)) + 1)`,
      tools,
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.answer).toBe(
      'list True True event\n[{"id": 1, "kind": "event"}] True None []\n8 7 None int\nHELLO hello None \'hello\'\n{"rows": [{"id": 1, "kind": "event"}], "n": 7, "s": "hello"}\nTrue\nTrue True 8',
    );
  });

  it("small results with attributes go back over the bridge as plain JSON: as an answer and as arguments", async () => {
    seen.length = 0;
    const outcome = await program('rows = query_db(query="one")\nanalysis_tool(data=rows)\nfinal_answer({"n": count(), "s": greet(), "rows": rows, "x": [count() / 2]})', tools);
    expect(outcome.error).toBeUndefined();
    expect(outcome.answer).toEqual({ n: 7, s: "hello", rows: [{ id: 1, kind: "event" }], x: [3.5] });
    expect(seen).toEqual([[{ id: 1, kind: "event" }]]);
  });

  it("await works on any value: a tool call, a small result's materialize(), load(); and inside async functions", async () => {
    const outcome = await program(
      `import asyncio
n = await count()
rows = await tools.query_db(query="one")
path = await rows.materialize()
text = open(path).read()
async def twice():
    await asyncio.sleep(0)
    return (await count()) * 2
final_answer([n, await rows.load(), text, await twice()])`,
      tools,
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.answer).toEqual([7, [{ id: 1, kind: "event" }], '[{"id": 1, "kind": "event"}]', 14]);
  });

  it("a return inside an if at top level answers; a return inside a function stays the function's; a bare return ends the script with its printed output", async () => {
    const nested = await program("def double(x):\n    return 2 * x\nfor i in range(3):\n    if i == 2:\n        return double(count())\nprint('not reached')", tools);
    expect(nested).toMatchObject({ status: "ok", answer: 14 });
    expect(nested.output).toBe("");
    const bare = await program("print('printed answer')\nreturn\nprint('not reached')", tools);
    expect(bare).toMatchObject({ status: "ok", answer: "printed answer" });
  });

  it("tracebacks still point at the line the model wrote", async () => {
    const outcome = await program("x = await count()\n\nreturn {'v': x / 0}", tools);
    expect(outcome.status).toBe("error");
    expect(outcome.error).toMatch(/line 3, in <module>\n\s+return \{'v': x \/ 0\}\n[\s\S]*ZeroDivisionError: division by zero$/);
    expect(outcome.error).not.toContain("_lllm");
  });

  it("a real syntax error is reported as before", async () => {
    const outcome = await program("return {'a': 1", tools);
    expect(outcome.status).toBe("error");
    expect(outcome.error).toMatch(/SyntaxError: '\{' was never closed/);
  });
});
