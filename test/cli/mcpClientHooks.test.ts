import { afterEach, describe, expect, it, vi } from "vitest";
import { mcpClientHooks } from "../../src/cli/mcpClientHooks.js";

const saved = { stdin: process.stdin.isTTY, stderr: process.stderr.isTTY };
afterEach(() => {
  process.stdin.isTTY = saved.stdin;
  process.stderr.isTTY = saved.stderr;
});

/** What `body` writes to stderr (kept from the terminal). */
function stderrOf(body: () => void): string {
  const written: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    body();
  } finally {
    spy.mockRestore();
  }
  return written.join("");
}

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

  it("shows a burst of progress as its first step and its last, not each step", () => {
    // The clock stands still: a pause of a busy machine mid-burst must not let a step through.
    vi.useFakeTimers({ toFake: ["performance"] });
    let written: string;
    try {
      written = stderrOf(() => {
        const hooks = mcpClientHooks({ verbose: false, env: {} });
        for (let step = 1; step <= 2000; step++) hooks.onProgress?.({ server: "s", tool: "t", progress: step, total: 2000 });
      });
    } finally {
      vi.useRealTimers();
    }
    expect(written.split("\n").filter((line) => line !== "")).toEqual(["lllm: s.t: 1/2000", "lllm: s.t: 2000/2000"]);
  });

  it("cuts a long log message without splitting an emoji in two", () => {
    // The 1,000th character is the first half of 😀: the cut falls between its halves.
    const line = stderrOf(() => mcpClientHooks({ verbose: false, env: {} }).onLog?.({ server: "s", level: "error", data: `${"x".repeat(999)}😀 and more` }));
    expect(line).toContain(`${"x".repeat(999)}… (1010 characters)`);
    expect(line).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
