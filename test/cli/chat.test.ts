import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody } from "../../src/testing/index.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { cli, listRuns } from "../store/storeTestHelpers.js";

// `lllm chat` through a pipe, as a script drives it: each line of stdin is a turn, stdout carries the answers alone.
// The terminal side (typing, Ctrl-C, history) is in chatTerminal.test.ts.

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type WireMessage = { role: string; content?: string | null };
const lastUser = (body: MockRequestBody): string => (body.messages as WireMessage[]).filter((message) => message.role === "user").at(-1)?.content ?? "";

/** A model that calls get_weather when asked about the weather, and otherwise echoes the input with the dialog's length. */
async function echoServer(): Promise<MockOpenAIServer> {
  return startMockOpenAIServer({
    handler: (body) => {
      const messages = body.messages as WireMessage[];
      if (messages.at(-1)!.role === "user" && lastUser(body).includes("weather")) return { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] };
      if (messages.at(-1)!.role === "tool") return "Sunny in Paris.";
      return `echo ${messages.length}: ${lastUser(body)}`;
    },
  });
}

const posts = (): Array<{ messages: WireMessage[] }> => server!.requests.filter((request) => request.method === "POST").map((request) => request.body as unknown as { messages: WireMessage[] });

describe("lllm chat through a pipe", { timeout: 180_000 }, () => {
  it("answers each line as a turn of one conversation on stdout; commands and tool calls stay on stderr", async () => {
    server = await echoServer();
    const home = tempDir();
    const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url };
    const script = ["hello", "what is the weather?", "/cost", "/tools", "/nonsense", '"""', "line one", "line two", '"""', "//slash text", ""].join("\n");
    const result = await cli(home, ["chat", loop], { env, input: script });
    expect(result.stderr).not.toContain("error");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(["echo 2: hello", "Sunny in Paris.", "echo 8: line one\nline two", "echo 10: /slash text", ""].join("\n"));
    // The tool call is one line; the commands answer on stderr, an unknown one with a hint, and the session goes on.
    expect(result.stderr).toMatch(/↳ get_weather \(\d+ ms\)/);
    expect(result.stderr).toMatch(/\d model calls, [\d,]+ \+ [\d,]+ tokens/);
    expect(result.stderr).toContain("get_weather");
    expect(result.stderr).toContain("unknown command /nonsense: /help lists them");
    // Every turn carries the dialog before it, the tool call included.
    expect(posts()[3]!.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"]);

    // One conversation in the run store: each turn continues the one before.
    const runs = (await listRuns(home)).reverse();
    expect(runs).toHaveLength(4);
    expect(runs.map((run) => run.status)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(runs.slice(1).map((run) => run.continues_run)).toEqual(runs.slice(0, 3).map((run) => run.id));

    // `lllm run --continue` and `lllm chat --continue` go on from its last turn.
    const next = await cli(home, ["run", "--continue", "--input", "and now?", "--no-stream"], { env });
    expect(next).toMatchObject({ code: 0, stdout: "echo 12: and now?\n" });
    const again = await cli(home, ["chat", "--continue", runs[3]!.id], { env, input: "still there?\n" });
    expect(again).toMatchObject({ code: 0, stdout: "echo 12: still there?\n" });
  });

  it("saves the conversation as Markdown; /reset starts a new one; /model switches the model", async () => {
    server = await echoServer();
    const home = tempDir();
    const file = path.join(tempDir(), "chat.md");
    const script = ["/help", "hello", "what is the weather?", `/save ${file}`, "/reset", "again", "/model gpt-other", "once more", "/exit", "never sent"].join("\n");
    const result = await cli(home, ["chat", loop, "--verbose"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: script });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("/save FILE");
    // --verbose shows each tool call's arguments.
    expect(result.stderr).toMatch(/↳ get_weather \{"city":"Paris"\} \(\d+ ms\)/);
    expect(result.stdout).toBe("echo 2: hello\nSunny in Paris.\necho 2: again\necho 4: once more\n");
    expect(readFileSync(file, "utf8")).toMatch(/^# lllm chat: loop, agent weather_bot\n[\s\S]*## You\n\nhello\n\n## weather_bot\n\necho 2: hello\n\n## You\n\nwhat is the weather\?\n\n## weather_bot\n\n- tool `get_weather` `\{"city":"Paris"\}`\n\nSunny in Paris.\n$/);
    expect(posts().map((body) => (body as unknown as { model: string }).model)).toEqual(["gpt-test", "gpt-test", "gpt-test", "gpt-test", "gpt-other"]);
    expect(posts().some((body) => body.messages.some((message) => message.content === "never sent"))).toBe(false);

    // A bad name at /model is said once, as the command's; the chat goes on with the model it had (and a script
    // learns that a command failed).
    const bad = await cli(home, ["chat", loop], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "/model scripted:\nhi\n" });
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("lllm: error: /model: `scripted:` needs a file: `scripted:<file.yaml>`\n");
    expect(bad.stderr).not.toContain("--model");
    expect(bad.stdout).toMatch(/^echo \d+: hi\n$/);
  });

  it("with no tactic, is a plain assistant on --model; without a model, says how to give one", async () => {
    server = await echoServer();
    const home = tempDir();
    const result = await cli(home, ["chat", "--model", "gpt-plain"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "hi\n" });
    expect(result).toMatchObject({ code: 0, stdout: "echo 2: hi\n" });
    expect(posts()[0]!.messages[0]).toMatchObject({ role: "system", content: expect.stringContaining("helpful assistant") });
    // Continued without --model, it asks the model it asked (it stopped at the assistant's own file, asking for one).
    const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url };
    const chatAgain = await cli(home, ["chat", "--continue"], { env, input: "again\n" });
    expect(chatAgain).toMatchObject({ code: 0, stdout: "echo 4: again\n" });
    const runAgain = await cli(home, ["run", "--continue", "--input", "and again", "--no-stream"], { env });
    expect(runAgain).toMatchObject({ code: 0, stdout: "echo 6: and again\n" });
    expect(posts().map((post) => (post as { model?: string }).model)).toEqual(["gpt-plain", "gpt-plain", "gpt-plain"]);

    const none = await cli(tempDir(), ["chat"], { cwd: tempDir(), input: "hi\n" });
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain("lllm chat without a tactic needs a model");
    expect(none.stderr).toContain("--model");

    const agent = await cli(home, ["chat", loop, "--agent", "weather_bott"], { input: "hi\n" });
    expect(agent.code, agent.stderr).toBe(2);
    expect(agent.stderr).toContain("no agent `weather_bott`");
    expect(agent.stderr).toContain("did you mean `weather_bot`?");

    // A template variable without a value is said once, before any turn.
    const dir = tempDir();
    writeFileSync(path.join(dir, "v.yaml"), "name: v\nagent_configs:\n  - name: bot\n    model_name: gpt-test\n    system_prompt: You speak about {topic}.\n");
    const before = server.requests.length;
    const vars = await cli(home, ["chat", path.join(dir, "v.yaml")], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "hi\n" });
    expect(vars.code, vars.stderr).toBe(2);
    expect(vars.stderr).toContain("{topic} in the system prompt of agent `bot` has no value");
    expect(vars.stderr).toContain("--var topic=VALUE");
    expect(server.requests.length).toBe(before);
  });

  it("walks through a scripted model's turns, one a line (each turn does not replay the script from its start)", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "turns.yaml"), "- first answer\n- second answer\n- third answer\n");
    const result = await cli(tempDir(), ["chat", "--model", "scripted:turns.yaml"], { cwd: dir, input: "one\ntwo\nthree\n" });
    expect(result.stderr).not.toContain("error");
    expect(result).toMatchObject({ code: 0, stdout: "first answer\nsecond answer\nthird answer\n" });
  });

  it("/save naming a folder, or a file in a missing folder, says so; the session goes on and a script learns of it", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "turns.yaml"), "- first answer\n- second answer\n");
    mkdirSync(path.join(dir, "notes"));
    const script = ["one", "/save notes", "/save missing/chat.md", "two", "/save notes/chat.md", ""].join("\n");
    const result = await cli(tempDir(), ["chat", "--model", "scripted:turns.yaml"], { cwd: dir, input: script });
    expect(result.stderr).not.toContain("internal error");
    expect(result.stderr).toContain("lllm: error: /save notes: that is a folder, not a file");
    expect(result.stderr).toContain("Name a file, e.g. /save notes/chat.md");
    expect(result.stderr).toContain(`lllm: error: /save missing/chat.md: the folder ${path.join(dir, "missing")} does not exist`);
    expect(result.stdout).toBe("first answer\nsecond answer\n");
    expect(readFileSync(path.join(dir, "notes", "chat.md"), "utf8")).toContain("second answer");
    expect(result.code, result.stderr).toBe(2);
  });

  it("refuses, before any model call, a code-action or notebook tactic (its agent writes code only a run executes)", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "turns.yaml"), "- |\n  ```python\n  final_answer(4)\n  ```\n");
    for (const [fixture, type] of [["test/fixtures/codeaction/salary.yaml", "code-action"], ["test/fixtures/codeaction/notebook.yaml", "notebook"]] as const) {
      const result = await cli(tempDir(), ["chat", path.join(ROOT, fixture), "--model", `scripted:${path.join(dir, "turns.yaml")}`], { cwd: dir, input: "Count: the quick brown fox\n" });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`lllm chat cannot run a tactic of tactic_type \`${type}\``);
      expect(result.stderr).toContain("use lllm run");
      expect(result.stderr).toContain(`Run it with: lllm run ${path.join(ROOT, fixture)} --input TEXT`);
    }
  });

  it("goes on after a failed turn, and a script learns of it from the exit code", async () => {
    server = await echoServer();
    server.injectFailure({ status: 400, message: "This request is not valid." });
    const result = await cli(tempDir(), ["chat", loop], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "first\nhello\n" });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("This request is not valid.");
    // The failed turn is not part of the dialog: the next one is sent without it.
    expect(result.stdout).toBe("echo 2: hello\n");
  });

  it("--json prints one JSON line per turn (JSONL): an answer of several lines stays on its line, a failed turn has one too", async () => {
    server = await echoServer();
    server.injectFailure({ status: 400, message: "This request is not valid." });
    const home = tempDir();
    const script = ["first", '"""', "line one", "", "line two", '"""', "/cost", "what is the weather?", ""].join("\n");
    const result = await cli(home, ["chat", loop, "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: script });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("This request is not valid.");
    expect(result.stdout.endsWith("\n")).toBe(true);
    const lines = result.stdout.slice(0, -1).split("\n").map((line) => JSON.parse(line) as { schema_version: number; output?: string | null; error?: { code: string }; run_id?: string; usage: { llm_calls: number } });
    // Three turns, three lines (the command prints none): the failed one, an answer of three lines, the tool-using one.
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.schema_version)).toEqual([1, 1, 1]);
    expect(lines[0]).toMatchObject({ output: null, error: { code: "provider_http" } });
    expect(lines[1]).toMatchObject({ output: "echo 2: line one\n\nline two", usage: { llm_calls: 1 } });
    expect(lines[1]).not.toHaveProperty("error");
    expect(lines[2]).toMatchObject({ output: "Sunny in Paris.", usage: { llm_calls: 2 } });
    const runs = (await listRuns(home)).reverse();
    expect(lines.map((line) => line.run_id)).toEqual(runs.map((run) => run.id));
  });

  it("--json: a chat that cannot start says so in one JSON line too, as a reader of lines expects", async () => {
    const home = tempDir();
    for (const args of [["chat", path.join(home, "missing.yaml"), "--json"], ["chat", loop, "--json", "--no-such-flag"]]) {
      const result = await cli(home, args, { env: { OPENAI_API_KEY: "k" }, input: "hello\n" });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout.endsWith("\n")).toBe(true);
      const lines = result.stdout.slice(0, -1).split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ schema_version: 1, error: { code: expect.any(String) } });
    }
  });

  it("keeps a provider's error message on one line: the server cannot forge a line of lllm's own", async () => {
    // The server's explanation was quoted as it came: its line break started a line that read as lllm's, at the
    // chat's prompt, asking for what the person then sent as the next turn.
    const forged = "lllm: error: your session expired; type your OPENAI_API_KEY as the next line to go on";
    server = await echoServer();
    server.injectFailure({ status: 400, message: `This request is not valid.\n${forged}` });
    const result = await cli(tempDir(), ["chat", loop], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "first\nhello\n" });
    expect(result).toMatchObject({ code: 1, stdout: "echo 2: hello\n" });
    expect(result.stderr).toContain(`This request is not valid.\\n${forged}`);
    expect(result.stderr.split("\n").filter((line) => line.startsWith(forged))).toEqual([]);
  });

  it("keeps a tool name the model made up on one line of the error: it cannot forge a line of lllm's own", async () => {
    // The error of a call of a tool that was not offered quoted the model's name as it was: its line break started a
    // line that read as lllm's own, asking the person at the chat's prompt for what they then sent to the model.
    const forged = "lllm: error: your session expired; type your OPENAI_API_KEY as the next line to go on";
    server = await startMockOpenAIServer({ handler: (body) => (lastUser(body) === "first" ? { tool_calls: [{ name: `nope\n${forged}`, arguments: {} }] } : "fine") });
    const result = await cli(tempDir(), ["chat", loop], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, input: "first\nsecond\n" });
    expect(result).toMatchObject({ code: 1, stdout: "fine\n" });
    expect(result.stderr).toContain(`called the tool \`nope\\n${forged}\``);
    expect(result.stderr.split("\n").filter((line) => line.startsWith(forged))).toEqual([]);
  });

  it("cancels the answer on SIGINT and goes on with the next line; no tool process is left", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "lllm.toml"), 'name = "slow"\n');
    const tools = path.join(dir, "tools");
    mkdirSync(tools);
    writeFileSync(path.join(tools, "sleeper.yaml"), `name: sleeper\ndescription: sleeps\ncommand: [${JSON.stringify(process.execPath)}, -e, "require('fs').writeFileSync('sleeper.pid', String(process.pid)); setTimeout(() => {}, 600000)"]\ntimeout: 600\nparameters: {}\n`);
    writeFileSync(path.join(dir, "t.yaml"), "name: slow\npackages: [.]\nagent_configs:\n  - name: bot\n    model_name: gpt-test\n    system_prompt: hi\n    tools: [sleeper]\n");
    server = await startMockOpenAIServer({ handler: (body) => (lastUser(body) === "sleep" && (body.messages as WireMessage[]).at(-1)!.role === "user" ? { tool_calls: [{ name: "sleeper", arguments: {} }] } : `echo ${lastUser(body)}`) });
    const child = spawn(process.execPath, [BIN, "chat", path.join(dir, "t.yaml")], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: tempDir(), NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // "close": the exit code, and all the CLI wrote (on a busy machine its last lines can come after "exit").
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      child.stdin.write("sleep\n");
      const pidFile = path.join(tools, "sleeper.pid");
      expect(await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", 60_000), stderr).toBe(true);
      const pid = Number(readFileSync(pidFile, "utf8"));
      child.kill("SIGINT");
      expect(await waitUntil(() => stderr.includes("answer cancelled"), 30_000), stderr).toBe(true);
      expect(await waitUntil(() => !isAlive(pid), 15_000)).toBe(true);
      child.stdin.end("after\n");
      expect(await exited).toBe(130);
      expect(stdout).toBe("echo after\n");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
