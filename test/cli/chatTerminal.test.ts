import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody } from "../../src/testing/index.js";
import { Tmux } from "../helpers/tmux.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

// `lllm chat` at a terminal, as a person uses it: typed under tmux (a real pseudo-terminal, raw mode, readline),
// Ctrl-C in the middle of an answer, the up arrow across two sessions. tmux is a test dependency (.ci/run installs
// it); without it this file fails rather than skip.

const tmux = new Tmux();
let server: MockOpenAIServer | undefined;
const startChat = (args: string[], env: Record<string, string>, cwd: string): string => tmux.startLllm(["chat", ...args], { NO_COLOR: "1", ...env }, cwd);
const screen = (name: string): string => tmux.screen(name);
const keys = (name: string, ...typed: string[]): void => tmux.keys(name, ...typed);
const type = (name: string, text: string): void => tmux.type(name, text);
const until = (name: string, check: (text: string) => boolean, what: string): Promise<string> => tmux.until(name, check, what);

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(() => tmux.kill());

type WireMessage = { role: string; content?: string | null };

describe("lllm chat at a terminal (tmux)", { timeout: 240_000 }, () => {
  it("streams answers to typed lines, cancels an answer and its tool on Ctrl-C, and keeps the session", async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "tools"));
    writeFileSync(path.join(dir, "lllm.toml"), 'name = "slow"\n');
    writeFileSync(path.join(dir, "tools", "sleeper.yaml"), `name: sleeper\ndescription: sleeps\ncommand: [${JSON.stringify(process.execPath)}, -e, "require('fs').writeFileSync('sleeper.pid', String(process.pid)); setTimeout(() => {}, 600000)"]\ntimeout: 600\nparameters: {}\n`);
    writeFileSync(path.join(dir, "t.yaml"), "name: slow\npackages: [.]\nagent_configs:\n  - name: bot\n    model_name: gpt-test\n    system_prompt: hi\n    tools: [sleeper]\n");
    let release: (() => void) | undefined;
    server = await startMockOpenAIServer({
      handler: async (body: MockRequestBody) => {
        const messages = body.messages as WireMessage[];
        const last = messages.filter((message) => message.role === "user").at(-1)?.content ?? "";
        if (messages.at(-1)!.role === "user" && last === "use the tool") return { tool_calls: [{ name: "sleeper", arguments: {} }] };
        // A slow reply: the test cancels it before it comes.
        if (last === "be slow") await new Promise<void>((resolve) => (release = resolve));
        return `you said ${last} (${messages.length} messages)`;
      },
    });
    const home = tempDir();
    const name = startChat([path.join(dir, "t.yaml")], { LLLM_HOME: home, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, dir);
    await until(name, (text) => text.includes("/help for commands"), "the banner");
    type(name, "hello there");
    keys(name, "Enter");
    await until(name, (text) => text.includes("you said hello there (2 messages)"), "the first answer");

    // Ctrl-C while the model is still answering: the answer is cancelled, the session goes on.
    type(name, "be slow");
    keys(name, "Enter");
    await waitUntil(() => release !== undefined, 60_000);
    keys(name, "C-c");
    await until(name, (text) => text.includes("answer cancelled"), "the cancellation");
    release?.();

    // Ctrl-C while a tool runs: its process is gone.
    type(name, "use the tool");
    keys(name, "Enter");
    const pidFile = path.join(dir, "tools", "sleeper.pid");
    expect(await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", 60_000), screen(name)).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    keys(name, "C-c");
    await until(name, (text) => text.split("answer cancelled").length === 3, "the second cancellation");
    expect(await waitUntil(() => !isAlive(pid), 15_000), `tool process ${pid} still running`).toBe(true);

    // The cancelled turns are not part of the dialog; a multi-line block is one turn.
    type(name, '"""');
    keys(name, "Enter");
    type(name, "two");
    keys(name, "Enter");
    type(name, 'lines"""');
    keys(name, "Enter");
    await until(name, (text) => text.includes("you said two\nlines (4 messages)"), "the block's answer");

    // Ctrl-C at the prompt (once the turn has ended: the prompt is back) drops the line; Ctrl-D ends the session.
    await until(name, (text) => text.trimEnd().endsWith("lines (4 messages)\n>"), "the prompt after the answer");
    type(name, "never sent");
    keys(name, "C-c");
    keys(name, "C-d");
    const end = await until(name, (text) => /EXIT=\d+/.test(text), "the exit");
    expect(end).toContain("EXIT=0");
    expect(server.requests.some((request) => JSON.stringify(request.body ?? "").includes("never sent"))).toBe(false);
  });

  it("keeps the history across sessions (up arrow), readable by the user alone", async () => {
    server = await startMockOpenAIServer({ handler: (body: MockRequestBody) => `ok: ${(body.messages as WireMessage[]).at(-1)!.content}` });
    const home = tempDir();
    const env = { LLLM_HOME: home, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url };
    const first = startChat(["--model", "gpt-test"], env, home);
    await until(first, (text) => text.includes("/help for commands"), "the banner");
    type(first, "remember this line");
    keys(first, "Enter");
    await until(first, (text) => text.includes("ok: remember this line"), "the answer");
    type(first, "/exit");
    keys(first, "Enter");
    await until(first, (text) => text.includes("EXIT=0"), "the exit");
    const history = path.join(home, "chat_history");
    expect(statSync(history).mode & 0o777).toBe(0o600);

    const second = startChat(["--model", "gpt-test"], env, home);
    await until(second, (text) => text.includes("/help for commands") && text.trimEnd().endsWith(">"), "the prompt");
    keys(second, "Up");
    keys(second, "Up");
    await until(second, (text) => /> remember this line\s*$/.test(text.trimEnd()), "the recalled line");
    keys(second, "Enter");
    await until(second, (text) => text.split("ok: remember this line").length === 2, "the answer to the recalled line");
    keys(second, "C-d");
    await until(second, (text) => text.includes("EXIT=0"), "the exit");
  });

  it("writes the history file with every known secret redacted (a key pasted into the chat)", async () => {
    server = await startMockOpenAIServer({ handler: () => "noted" });
    const home = tempDir();
    const key = "sk-history-secret-0123456";
    const session = startChat(["--model", "gpt-test"], { LLLM_HOME: home, OPENAI_API_KEY: key, OPENAI_BASE_URL: server.url }, home);
    await until(session, (text) => text.includes("/help for commands"), "the banner");
    type(session, `my key is ${key}, keep it`);
    keys(session, "Enter");
    await until(session, (text) => text.includes("noted"), "the answer");
    keys(session, "C-d");
    await until(session, (text) => text.includes("EXIT=0"), "the exit");
    const history = readFileSync(path.join(home, "chat_history"), "utf8");
    expect(history).toBe("my key is [redacted], keep it\n");
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
