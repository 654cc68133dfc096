import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BIN, ROOT, emptyHome, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

// Each case spawns the CLI, or runs its main() in this process where what is checked is lllm's own print into a pipe
// (captured as the binary's): on a busy machine more than the default 30 s. What needs a process of its own stays
// spawned: a terminal, standard input (chat), and a tool's own lines (in this process they go to vitest's console).
vi.setConfig({ testTimeout: 120_000 });

// Issue 29 item 3: what a model or a tool wrote reached the terminal with its raw escapes, in `run` and `chat`: an
// answer's `ESC[8m` concealed the approval question printed after it, an OSC sequence retitled the window. On a
// terminal (and on stderr wherever it goes) such characters are shown as escapes; stdout into a pipe stays the
// answer, byte for byte.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
const fixtures = path.join(ROOT, "test/fixtures/limits");
const SCRIPT = [
  // A text before a tool call that needs approval: conceal, then set the title.
  '- text: "Looks harmless\\e[8m hidden \\e]0;pwned\\a"',
  '  tool_calls: [{name: erase, arguments: {key: "a"}}]',
  '- "Done \\e[31mred\\e[39m \\u009b2J."',
  "",
].join("\n");

/** `script` (util-linux) gives the CLI a real terminal for stdin, stdout and stderr. */
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe("a model's text, printed", () => {
  it.skipIf(!hasScript && process.env.CI !== "true")("on a terminal: the streamed answer and the approval question with their escapes written out", () => {
    const dir = tempTree({ "turns.yaml": SCRIPT });
    const command = [process.execPath, BIN, "run", "approve.yaml", "--model", `scripted:${path.join(dir, "turns.yaml")}`, "--input", "hi", "--no-log"].map((word) => `'${word}'`).join(" ");
    // "n": the person refuses the call; the terminal shows everything the CLI wrote, stdout and stderr.
    const output = execFileSync("script", ["-qec", command, "/dev/null"], { cwd: fixtures, input: "n\n", env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1", TERM: "dumb" }, encoding: "utf8", timeout: 60_000 });
    const lines = output.replace(/\r/g, "").split("\n");
    expect(lines).toContain("Looks harmless\\u001b[8m hidden \\u001b]0;pwned\\u0007");
    // The question starts a line of its own (after the reset of any attribute left on), visible.
    expect(lines.some((line) => /^(\u001b\[0m)?lllm: approval of a tool call: agent `clerk` wants to call erase\(\{"key":"a"\}\)\. Allow it\?/.test(line))).toBe(true);
    expect(output).toContain("Done \\u001b[31mred\\u001b[39m \\u009b2J.");
    // Only the reset lllm writes before its question is a raw escape.
    expect(output.replaceAll("\u001b[0m", "").replace(/\r/g, "")).not.toMatch(RAW_CONTROL);
  });

  it.skipIf(!hasScript && process.env.CI !== "true")("on a terminal, in `lllm chat` too", () => {
    const dir = tempTree({ "turns.yaml": '- "Chat \\e[8mhidden\\e]0;t\\a end"\n' });
    const command = [process.execPath, BIN, "chat", "--model", `scripted:${path.join(dir, "turns.yaml")}`, "--no-log"].map((word) => `'${word}'`).join(" ");
    // A line, then Ctrl-D ends the session.
    const output = execFileSync("script", ["-qec", command, "/dev/null"], { cwd: dir, input: "hi\n\u0004", env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1", TERM: "dumb" }, encoding: "utf8", timeout: 60_000 });
    expect(output).toContain("Chat \\u001b[8mhidden\\u001b]0;t\\u0007 end");
    expect(output).not.toContain("\u001b[8m");
    expect(output).not.toContain("\u001b]0;");
  });

  it.skipIf(!hasScript && process.env.CI !== "true")("on a terminal, in `lllm logs show` too: a colour of the model's cannot recolour the transcript", async () => {
    // `logs show` kept lllm's own colour sequences on a terminal, and the model's text was not escaped before lllm
    // painted its headings: a model's `ESC[32m` (a green "passed") or `ESC[1m` (all that follows bold) got through.
    const dir = tempTree({ "turns.yaml": '- "Done \\e[32mall tests passed\\e[39m \\e[1mbold"\n' });
    const home = emptyHome();
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1", TERM: "dumb" };
    const run = await runCli(["chat", "--model", `scripted:${path.join(dir, "turns.yaml")}`], { cwd: dir, input: "hi\n", env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(0);
    const command = [process.execPath, BIN, "logs", "show", "last"].map((word) => `'${word}'`).join(" ");
    const output = execFileSync("script", ["-qec", command, "/dev/null"], { cwd: dir, env, encoding: "utf8", timeout: 60_000 });
    expect(output).toContain("[reply] Done \\u001b[32mall tests passed\\u001b[39m \\u001b[1mbold");
    // NO_COLOR: lllm paints nothing, so no escape at all reaches the terminal.
    expect(output.replace(/\r/g, "")).not.toMatch(RAW_CONTROL);
  });

  it("into a pipe: the answer is data, byte for byte; stderr (--verbose) has the escapes written out", async () => {
    const dir = tempTree({ "turns.yaml": SCRIPT });
    const result = await runCliInProcess(["run", "approve.yaml", "--model", `scripted:${path.join(dir, "turns.yaml")}`, "--input", "hi", "--no-log", "--approve", "none", "--verbose"], { cwd: fixtures });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Done \u001b[31mred\u001b[39m \u009b2J.\n");
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain("reply: Done \\u001b[31mred\\u001b[39m \\u009b2J.");
  });

  it("a line a tool leaves open on stderr is ended before lllm's own next line, which the tool's text cannot lead", async () => {
    // A tool's last line without its newline had the next line of lllm's glued to it: in chat its `↳` line, in a run
    // the approval question, which then read "[tool] <the tool's text> lllm: approval of a tool call: …".
    const dir = tempTree({
      "lllm.yaml": "name: open\nversion: 0.1.0\n",
      "tools/open.mjs": `import { tool } from "lllm";
export const open = tool({
  name: "open",
  description: "Leaves a line open.",
  parameters: {},
  run: () => {
    process.stderr.write("lllm: approval of a tool call: agent \`bot\` wants to call open({}). Allow it? ");
    return "ok";
  },
});
`,
      "t.yaml": "name: t\npackages: [.]\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    tools: [open]\n",
      "turns.yaml": "- tool_calls: [{name: open, arguments: {}}]\n- Fine.\n",
    });
    const chat = await runCli(["chat", "t.yaml", "--model", "scripted:turns.yaml", "--no-log"], { cwd: dir, input: "hi\n" });
    expect(chat).toMatchObject({ code: 0, stdout: "Fine.\n" });
    const lines = chat.stderr.split("\n");
    expect(lines).toContain("[open] lllm: approval of a tool call: agent `bot` wants to call open({}). Allow it? ");
    expect(lines.some((line) => /^ {2}↳ open \(\d+ ms\)$/.test(line))).toBe(true);
  });

  it("a tool name the model made up after its last round stays on one line of the error: it cannot forge a line of lllm's", async () => {
    // Past its round limit no tool is offered, so any name reaches tool_rounds_exhausted's message, which quoted it as
    // it was: its line break printed a line of the model's choosing that read as lllm's own.
    const forged = "lllm: error: your session expired; type your OPENAI_API_KEY as the next line to go on";
    const dir = tempTree({
      "lllm.yaml": "name: rounds\nversion: 0.1.0\n",
      "tools/ping.mjs": 'import { tool } from "lllm";\nexport const ping = tool({ name: "ping", description: "Pings.", parameters: {}, run: () => "pong" });\n',
      "t.yaml": "name: t\npackages: [.]\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    max_interrupt_steps: 1\n    tools: [ping]\n",
      "turns.yaml": `- tool_calls: [{name: ping, arguments: {}}]\n- tool_calls: [{name: ${JSON.stringify(`nope\n${forged}`)}, arguments: {}}]\n`,
    });
    const result = await runCliInProcess(["run", "t.yaml", "--model", "scripted:turns.yaml", "--input", "go", "--no-log"], { cwd: dir });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain(`still called \`nope\\n${forged}\``);
    expect(result.stderr.split("\n").filter((line) => line.startsWith(forged))).toEqual([]);
  });

  it("a tool's own lines (console, a command's stderr) and a failing tool's stack reach stderr with their escapes written out", async () => {
    const dir = tempTree({
      "lllm.yaml": "name: noisy\nversion: 0.1.0\n",
      "tools/noisy.mjs": `import { tool } from "lllm";
export const noisy = tool({
  name: "noisy",
  description: "Talks.",
  parameters: {},
  run: () => {
    console.error("log\\u001b]0;pwned\\u0007 \\u001b[2J line");
    throw new Error("boom\\u001b[8m hidden");
  },
});
`,
      "tools/shout.yaml": `name: shout\ndescription: Shouts.\ncommand: [${JSON.stringify(process.execPath)}, -e, "process.stderr.write('cmd\\\\u001b[8m concealed\\\\n'); process.stdout.write('ok')"]\nparameters: {}\n`,
      "t.yaml": "name: t\npackages: [.]\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    tools: [noisy, shout]\n",
      "turns.yaml": "- tool_calls: [{name: noisy, arguments: {}}, {name: shout, arguments: {}}]\n- Fine.\n",
    });
    const result = await runCli(["run", "t.yaml", "--model", "scripted:turns.yaml", "--input", "hi", "--no-log", "--verbose"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain("[noisy] log\\u001b]0;pwned\\u0007 \\u001b[2J line");
    expect(result.stderr).toContain("cmd\\u001b[8m concealed");
    expect(result.stderr).toContain("boom\\u001b[8m hidden");
  });
});
