import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { askOnTerminal } from "../../src/approval/index.js";
import { elicitOnTerminal } from "../../src/tools/elicitOnTerminal.js";
import { discardTypedAhead, inTurn } from "../../src/util/terminalTurn.js";
import { waitUntil } from "../helpers/waitUntil.js";

/**
 * The process's one queue of terminal questions: a question is shown and read only once the one before it is
 * answered, whichever part of lllm asks (approvals, tools' and MCP servers' questions). The terminal itself is
 * tested in test/approval/terminalQueue.test.ts.
 */
describe("inTurn", () => {
  it("runs each question once the one before it has settled, in the order they were asked, a failed one too", async () => {
    const order: string[] = [];
    let release = (): void => undefined;
    const first = inTurn(() => new Promise<string>((resolve) => (release = () => resolve("first"))).then((value) => (order.push(value), value)));
    const second = inTurn(async () => {
      order.push("second");
      throw new Error("no terminal");
    });
    const third = inTurn(async () => (order.push("third"), "third"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release();
    expect(await first).toBe("first");
    await expect(second).rejects.toThrow("no terminal");
    expect(await third).toBe("third");
    expect(order).toEqual(["first", "second", "third"]);
  });

  it("an approval and a tool's question asked meanwhile are shown one after the other: one line answers one question", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
    const approve = askOnTerminal({ input, output });
    const approved = approve({ tool: "erase", arguments: { key: "a" }, agent: "clerk" });
    await waitUntil(() => shown.includes("Allow it?"));
    const answer = elicitOnTerminal({ message: "Show more results?", requestedSchema: { type: "object", properties: { more: { type: "boolean" } } } }, { input, output });
    await new Promise((resolve) => setImmediate(resolve));
    expect(shown).not.toContain("Show more results?"); // it waits for the approval's answer
    input.write("n\n");
    expect(await approved).toBe(false);
    await waitUntil(() => shown.includes("more (y/n): "));
    input.write("y\n");
    expect(await answer).toEqual({ action: "accept", content: { more: true } });
  });
});

describe("discardTypedAhead", () => {
  it("leaves a stream that is not a terminal alone: what a pipe holds was written on purpose", async () => {
    const input = new PassThrough();
    input.write("y\n");
    await discardTypedAhead(input);
    expect(String(input.read())).toBe("y\n");
  });
});
