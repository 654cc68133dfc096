import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { tmuxEnv } from "../helpers/tmux.js";
import { waitUntil } from "../helpers/waitUntil.js";

/**
 * The approval question as a person meets it: the real CLI in a terminal (tmux), answered with keys. Each test
 * has a tmux server of its own (`-L`), killed afterwards.
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
const socket = `lllm-test-${process.pid}`;
let server: MockOpenAIServer | undefined;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: tmuxEnv() });
}

/** The whole pane, wrapped lines joined. */
function pane(): string {
  return tmux("capture-pane", "-p", "-J", "-t", "approve", "-S", "-300");
}

afterEach(async () => {
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  await server?.close();
  server = undefined;
});

const erase = (key: string): ScriptedTurn => ({ tool_calls: [{ name: "erase", arguments: { key } }] });
const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/** Start `lllm run approve.yaml` in a terminal; the shell says how it exited. */
async function startInTerminal(script: ScriptedTurn[]): Promise<{ outbox: string }> {
  server = await startMockOpenAIServer({ script });
  const home = tempDir("lllm-home-");
  const outbox = path.join(home, "outbox.txt");
  const env = { NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_OUTBOX: outbox, PATH: process.env.PATH ?? "", TMPDIR: process.env.TMPDIR ?? "", LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE ?? "" };
  const command = `env -i ${Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`).join(" ")} ${quote(process.execPath)} ${quote(BIN)} run approve.yaml --input 'Clean up.'; echo "lllm exited $?"; sleep 600`;
  tmux("new-session", "-d", "-s", "approve", "-x", "220", "-y", "50", "-c", fixtures, command);
  return { outbox };
}

async function waitFor(text: string): Promise<void> {
  const seen = await waitUntil(() => pane().includes(text), 60_000);
  expect(seen, `the terminal shows ${JSON.stringify(text)}; it shows:\n${pane()}`).toBe(true);
}

const question = (key: string): string => `lllm: agent \`clerk\` wants to call erase({"key":"${key}"}). Allow it? [y]es / [n]o / [a]lways for this run:`;

describe("the approval question on a terminal", () => {
  it("asks before each call: n refuses it, y runs it, a runs it and every later call of that tool without asking", async () => {
    const { outbox } = await startInTerminal([erase("a"), erase("b"), erase("c"), erase("d"), "Erased b, c and d."]);
    await waitFor(question("a"));
    tmux("send-keys", "-t", "approve", "n", "Enter");
    await waitFor(question("b"));
    tmux("send-keys", "-t", "approve", "y", "Enter");
    await waitFor(question("c"));
    tmux("send-keys", "-t", "approve", "a", "Enter");
    await waitFor("lllm exited 0");
    const text = pane();
    expect(text).toContain("Erased b, c and d.");
    expect(text).not.toContain(question("d"));
    expect(existsSync(outbox) ? readFileSync(outbox, "utf8") : "").toBe("erased b\nerased c\nerased d\n");
    // The model read the refusal of the first call.
    expect(JSON.stringify(server!.requests[1]!.body.messages)).toContain("erase needs approval, and the call was refused; it did not run.");
  }, 300_000);

  it("Ctrl-C at the question stops the run (exit 130) and runs nothing", async () => {
    const { outbox } = await startInTerminal([erase("a"), "never"]);
    await waitFor(question("a"));
    tmux("send-keys", "-t", "approve", "C-c");
    await waitFor("lllm exited 130");
    expect(existsSync(outbox)).toBe(false);
  }, 300_000);
});
