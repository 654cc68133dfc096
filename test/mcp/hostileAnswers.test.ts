import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 120_000 });

// The first `run` and the `mcp tools` of the endless list spawn the built CLI, end to end; the others run its main()
// in this process (what they check is lllm's own print, captured as the binary's; the server's stderr is lllm's pipe).

const HOSTILE_SERVER = fileURLToPath(new URL("./fixtures/hostileServer.mjs", import.meta.url));

/** `lllm run` of a tactic whose model calls the hostile server's `tool` (the server named `noisy`) once: in this process. */
function callNoisy(tool: string): Promise<CliResult> {
  const dir = tempDir(`lllm-mcp-${tool}-`);
  writeFileSync(path.join(dir, "turns.json"), JSON.stringify([{ tool_calls: [{ name: tool, arguments: {} }] }, "Done."]));
  writeFileSync(
    path.join(dir, "t.yaml"),
    `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - ${JSON.stringify({ name: "noisy", command: process.execPath, args: [HOSTILE_SERVER] })}\n`,
  );
  return runCliInProcess(["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`]);
}

/**
 * A server's answer nested 100,000 levels deep (`{"a":{"a":…`, or a text of `[[[[…`) overflowed the stack of what
 * walks a result (redaction, the model's text, the log) and ended the whole run as an internal error. Nesting is
 * bounded like size: a structured result too deep is an error for the model, a text too deep stays text, and a
 * tools/list too deep fails the start with a clear error.
 */
describe("an MCP server's answers nested too deeply", () => {
  it("are an error for the model (structured) or plain text (JSON text); the run goes on", async () => {
    const dir = tempDir("lllm-mcp-deep-");
    writeFileSync(path.join(dir, "turns.json"), JSON.stringify([{ tool_calls: [{ name: "deep_structured", arguments: {} }, { name: "deep_text", arguments: {} }, { name: "small", arguments: {} }] }, "Done."]));
    writeFileSync(
      path.join(dir, "t.yaml"),
      `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - ${JSON.stringify({ name: "deep", command: process.execPath, args: [HOSTILE_SERVER] })}\n`,
    );
    const run = await runCli(["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { output: string; tool_calls: Array<{ error: string | null; result: unknown }> };
    expect(report.output).toBe("Done.");
    const [structured, text, small] = report.tool_calls;
    expect(structured!.error).toBe("MCP server `deep`: the result of `deep_structured` is nested deeper than 512 levels, so it was dropped");
    expect(text!.error).toBeNull();
    expect(text!.result).toBe(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(small!.result).toBe("fine");
  });

  it("in tools/list fail the start, naming the server and the request", async () => {
    const run = await runCliInProcess(["mcp", "tools", "--", process.execPath, HOSTILE_SERVER, "--deep-list"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain("MCP server `hostileServer` (");
    expect(run.stderr).toContain("failed to start: its answer to `tools/list` is nested deeper than 512 levels");
  });
});

describe("an MCP server's tools/list with no end", () => {
  it("fails the start once the pages hold more than 10 MB in all, rather than holding up to 100 of them", async () => {
    const run = await runCli(["mcp", "tools", "--", process.execPath, HOSTILE_SERVER, "--endless-list"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/failed to start: its tools are over the size limit \(\d+ tools in \d+ pages of `tools\/list`, more than 10 MB in all\)/);
  });
});

describe("an MCP server's log and progress messages of 1 MB", () => {
  it("are shown on stderr cut short, one line each", async () => {
    const run = await callNoisy("chatty");
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    expect(run.stdout).toBe("Done.\n");
    const log = run.stderr.split("\n").find((line) => line.startsWith("lllm: noisy [error] log zzz"));
    const progress = run.stderr.split("\n").find((line) => line.startsWith("lllm: noisy.chatty: 1/2 progress zzz"));
    expect(log).toMatch(/z… \(1000004 characters\)$/);
    expect(progress).toMatch(/z… \(1000009 characters\)$/);
    expect(run.stderr.length).toBeLessThan(5000);
  });

  it("in a flood are shown in part: the first 100 errors and a line saying more came, progress at most once a second and its end", async () => {
    const run = await callNoisy("flood");
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    expect(run.stdout).toBe("Done.\n");
    const lines = run.stderr.split("\n");
    const errors = lines.filter((line) => line.startsWith("lllm: noisy [error] failure "));
    expect(errors.map((line) => line.slice("lllm: noisy [error] failure ".length))).toEqual(Array.from({ length: 100 }, (_, index) => String(index + 1)));
    expect(lines).toContain("lllm: noisy sent more than 100 error messages; the rest are not shown (--verbose shows every message)");
    const progress = lines.filter((line) => line.startsWith("lllm: noisy.flood: "));
    // The first step, and at most one a second after it (the 2,000 come within moments). (The last step is shown
    // too when it arrives, see test/cli/mcpClientHooks.test.ts: the SDK drops what comes after the call's answer.)
    expect(progress[0]).toBe("lllm: noisy.flood: 1/2000");
    expect(progress.length).toBeLessThan(100);
  });
});
