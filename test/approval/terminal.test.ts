import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";

/**
 * The approval question as a person meets it: the real CLI in a terminal (tmux), answered with keys. Each test
 * has a tmux server of its own, on a socket of its own: a second server on the socket of one just killed can meet
 * the old one still going away ("server exited unexpectedly").
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
let server: MockOpenAIServer | undefined;
let terminal: Tmux | undefined;

afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

const erase = (key: string): ScriptedTurn => ({ tool_calls: [{ name: "erase", arguments: { key } }] });

/** Start `lllm run approve.yaml` in a terminal; the shell then says how it exited (`EXIT=<code>`). */
async function startInTerminal(script: ScriptedTurn[]): Promise<{ outbox: string; tmux: Tmux; session: string }> {
  server = await startMockOpenAIServer({ script });
  const home = tempDir("lllm-home-");
  const outbox = path.join(home, "outbox.txt");
  const tmux = (terminal = new Tmux());
  const env = { NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home, LLLM_TEST_OUTBOX: outbox };
  const session = tmux.startLllm(["run", "approve.yaml", "--input", "Clean up."], env, fixtures);
  return { outbox, tmux, session };
}

const question = (key: string): string => `lllm: approval of a tool call: agent \`clerk\` wants to call erase({"key":"${key}"}). Allow it? [y]es / [n]o / [a]lways for this run:`;

describe("the approval question on a terminal", () => {
  it("asks before each call: n refuses it, y runs it, a runs it and every later call of that tool without asking", async () => {
    const { outbox, tmux, session } = await startInTerminal([erase("a"), erase("b"), erase("c"), erase("d"), "Erased b, c and d."]);
    const waitFor = (text: string) => tmux.until(session, (screen) => screen.includes(text), JSON.stringify(text));
    await waitFor(question("a"));
    tmux.keys(session, "n", "Enter");
    await waitFor(question("b"));
    tmux.keys(session, "y", "Enter");
    await waitFor(question("c"));
    tmux.keys(session, "a", "Enter");
    const text = await waitFor("EXIT=0");
    expect(text).toContain("Erased b, c and d.");
    expect(text).not.toContain(question("d"));
    expect(existsSync(outbox) ? readFileSync(outbox, "utf8") : "").toBe("erased b\nerased c\nerased d\n");
    // The model read the refusal of the first call.
    expect(JSON.stringify(server!.requests[1]!.body.messages)).toContain("erase needs approval, and the call was refused; it did not run.");
  }, 300_000);

  it("Ctrl-C at the question stops the run (exit 130) and runs nothing", async () => {
    const { outbox, tmux, session } = await startInTerminal([erase("a"), "never"]);
    await tmux.until(session, (screen) => screen.includes(question("a")), "the question");
    tmux.keys(session, "C-c");
    await tmux.until(session, (screen) => screen.includes("EXIT=130"), "exit 130");
    expect(existsSync(outbox)).toBe(false);
  }, 300_000);
});
