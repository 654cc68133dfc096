import { afterEach, describe, expect, it } from "vitest";
import { mcpClientHooks } from "../../src/cli/mcpClientHooks.js";

const saved = { stdin: process.stdin.isTTY, stderr: process.stderr.isTTY };
afterEach(() => {
  process.stdin.isTTY = saved.stdin;
  process.stderr.isTTY = saved.stderr;
});

describe("mcpClientHooks", () => {
  it("on a terminal asks a server's question, unless told not to (lllm chat, whose prompt has the keyboard): then it is declined", () => {
    process.stdin.isTTY = true;
    process.stderr.isTTY = true;
    expect(mcpClientHooks({ verbose: false, env: {} }).elicit).toBeTypeOf("function");
    const chat = mcpClientHooks({ verbose: false, env: {}, ask: false });
    expect(chat.elicit).toBeUndefined();
    // Progress and logs still reach stderr.
    expect(chat.onProgress).toBeTypeOf("function");
    expect(chat.onLog).toBeTypeOf("function");
  });
});
