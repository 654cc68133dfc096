import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { approveNone, askOnTerminal, noticeFirstRefusal } from "../../src/approval/index.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** A policy over in-memory streams, with what it printed so far. */
function terminal(): { ask: ReturnType<typeof askOnTerminal>; input: PassThrough; shown: () => string } {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
  return { ask: askOnTerminal({ input, output }), input, shown: () => shown };
}

describe("askOnTerminal", () => {
  it("runs a call only on y or yes, one question at a time, showing the agent, the tool and its arguments", async () => {
    const { ask, input, shown } = terminal();
    const first = ask({ tool: "delete_employee", arguments: { name: "Ada" }, agent: "clerk" });
    const second = ask({ tool: "delete_employee", arguments: { name: "Bo" } });
    await waitUntil(() => shown() !== "");
    expect(shown()).toBe('lllm: approval of a tool call: agent `clerk` wants to call delete_employee({"name":"Ada"}). Allow it? [y]es / [n]o / [a]lways for this run: ');
    input.write("yes\n");
    expect(await first).toBe(true);
    await waitUntil(() => shown().includes('"Bo"'));
    expect(shown()).toContain('lllm: approval of a tool call: the program wants to call delete_employee({"name":"Bo"})');
    input.write("\n");
    expect(await second).toBe(false);
  });

  it("shows every argument whole, the shortest first, however long one is; what the model wrote cannot drive the terminal", async () => {
    const { ask, input, shown } = terminal();
    const padding = "x".repeat(5000);
    const asked = ask({ tool: "write_file\u001b[8m", arguments: { content: padding, path: "/home/victim", mode: "\u001b[8mhidden\u009b2J\u202eevil" }, agent: "clerk\u001b]0;title\u0007" });
    await waitUntil(() => shown().includes("Allow it?"));
    const question = shown();
    // Nothing raw a terminal acts on: ESC, BEL, C1 (CSI), bidi overrides.
    expect(question).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(question).toContain("lllm: approval of a tool call: agent `clerk\\u001b]0;title\\u0007` wants to call write_file\\u001b[8m with 3 arguments, each whole, shortest first:");
    const lines = question.split("\n");
    expect(lines[1]).toBe('  "path": "/home/victim"');
    expect(lines[2]).toBe('  "mode": "\\u001b[8mhidden\\u009b2J\\u202eevil"');
    // The long one last, whole (not cut), with its length said.
    expect(lines[3]).toBe(`  "content" (5,002 characters): "${padding}"`);
    expect(lines[4]).toBe("Allow it? [y]es / [n]o / [a]lways for this run: ");
    input.write("n\n");
    expect(await asked).toBe(false);
  });

  it("`always` runs that tool without asking again in this run; other tools are still asked", async () => {
    const { ask, input, shown } = terminal();
    const first = ask({ tool: "send_email", arguments: { to: "a" } });
    const queued = ask({ tool: "send_email", arguments: { to: "b" } });
    await waitUntil(() => shown() !== "");
    input.write("a\n");
    expect(await first).toBe(true);
    expect(await queued).toBe(true); // waited behind the first question, then needed none
    expect(await ask({ tool: "send_email", arguments: { to: "c" } })).toBe(true);
    expect(shown().match(/Allow it\?/g)).toHaveLength(1);
    const other = ask({ tool: "delete_employee", arguments: {} });
    await waitUntil(() => shown().includes("delete_employee"));
    input.write("n\n");
    expect(await other).toBe(false);
  });

  it("refuses when the run stops while the question waits, and at the end of input", async () => {
    const { ask, input, shown } = terminal();
    const controller = new AbortController();
    const waiting = ask({ tool: "x", arguments: {}, signal: controller.signal });
    await waitUntil(() => shown() !== "");
    controller.abort();
    expect(await waiting).toBe(false);
    const next = ask({ tool: "y", arguments: {} });
    await waitUntil(() => shown().includes("y({})"));
    input.end();
    expect(await next).toBe(false);
  });
});

describe("noticeFirstRefusal", () => {
  it("says so once, at the first refusal", async () => {
    const told: string[] = [];
    const policy = noticeFirstRefusal(approveNone, (request) => told.push(request.tool));
    expect(await policy({ tool: "a", arguments: {} })).toBe(false);
    expect(await policy({ tool: "b", arguments: {} })).toBe(false);
    expect(told).toEqual(["a"]);
  });
});
