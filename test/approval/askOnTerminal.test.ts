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
    expect(shown()).toBe('lllm: agent `clerk` wants to call delete_employee({"name":"Ada"}). Allow it? [y]es / [n]o / [a]lways for this run: ');
    input.write("yes\n");
    expect(await first).toBe(true);
    await waitUntil(() => shown().includes('"Bo"'));
    expect(shown()).toContain('lllm: the program wants to call delete_employee({"name":"Bo"})');
    input.write("\n");
    expect(await second).toBe(false);
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
