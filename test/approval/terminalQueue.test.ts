import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";
import { waitUntil } from "../helpers/waitUntil.js";

/**
 * Questions at the terminal take turns: a tool's question (elicitation) and an approval never wait for the same
 * line, and what was typed before a question was shown does not answer it. The real CLI in a terminal (tmux),
 * answered with keys, as in terminal.test.ts.
 */
let server: MockOpenAIServer | undefined;
let terminal: Tmux | undefined;

afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

/**
 * `search` waits for the test's go (a file), then asks "Show more results?" (ctx.elicit), says in a file that it
 * asked (once ctx.elicit has returned: the question is queued in the CLI), and writes the answer it got.
 */
const SEARCH = `import { existsSync, writeFileSync } from "node:fs";
import { tool } from "lllm";

export default tool({
  name: "search",
  description: "Search the records.",
  parameters: { query: { type: "string" } },
  run: async ({ query }, ctx) => {
    while (!existsSync(process.env.LLLM_TEST_GO)) await new Promise((resolve) => setTimeout(resolve, 20));
    const pending = ctx.elicit({ message: "Found 3 records. Show more results?", requestedSchema: { type: "object", properties: { more: { type: "boolean", title: "Show more results?" } }, required: ["more"] } });
    writeFileSync(process.env.LLLM_TEST_ASKED, "asked\\n");
    const answer = await pending;
    writeFileSync(process.env.LLLM_TEST_ANSWER, JSON.stringify(answer));
    return "results for " + String(query) + ": " + JSON.stringify(answer);
  },
});
`;

interface Setup {
  tmux: Tmux;
  session: string;
  files: { outbox: string; go: string; asked: string; answer: string };
}

/** A package with `erase` (needs approval) and `search` (asks a question); `lllm run` of its tactic in a terminal. */
async function startInTerminal(script: ScriptedTurn[]): Promise<Setup> {
  server = await startMockOpenAIServer({ script });
  const dir = tempDir("lllm-turns-");
  const kit = path.join(dir, "clerk");
  mkdirSync(path.join(kit, "tactics"), { recursive: true });
  cpSync(path.join(ROOT, "test/fixtures/limits/runtree/tools/erase.mjs"), path.join(kit, "tools", "erase.mjs"));
  writeFileSync(path.join(kit, "tools", "search.mjs"), SEARCH);
  writeFileSync(path.join(kit, "lllm.toml"), '[package]\nname = "clerk"\nversion = "1.0.0"\n');
  writeFileSync(path.join(kit, "tactics", "clerk.yaml"), "name: clerk\npackages: [..]\nglobal:\n  model_name: gpt-test\n  tools: [erase, search]\nagent_configs:\n  - name: clerk\n    system_prompt: You are the clerk.\n");
  const files = { outbox: path.join(dir, "outbox.txt"), go: path.join(dir, "go"), asked: path.join(dir, "asked"), answer: path.join(dir, "answer.json") };
  const env = { NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: path.join(dir, "home"), LLLM_TEST_OUTBOX: files.outbox, LLLM_TEST_GO: files.go, LLLM_TEST_ASKED: files.asked, LLLM_TEST_ANSWER: files.answer };
  const tmux = (terminal = new Tmux());
  const session = tmux.startLllm(["run", "tactics/clerk.yaml", "--input", "Clean up."], env, kit);
  return { tmux, session, files };
}

const approval = (key: string): string => `lllm: approval of a tool call: agent \`clerk\` wants to call erase({"key":"${key}"}). Allow it? [y]es / [n]o / [a]lways for this run:`;
const ELICITATION = "lllm: tool `search` asks: Found 3 records. Show more results?";
const FIELD = "Show more results? (y/n):";

/** The screen's last line that is not blank: where the cursor waits for an answer. */
const lastLine = (screen: string): string => screen.trimEnd().split("\n").at(-1)!.trimEnd();

describe("questions at the terminal take turns", () => {
  it("a tool's question asked while an approval waits is shown after it, alone: its y answers only it, and the next approval is asked after (n refuses it)", async () => {
    const { tmux, session, files } = await startInTerminal([{ tool_calls: [{ name: "erase", arguments: { key: "a" } }, { name: "search", arguments: { query: "old" } }, { name: "erase", arguments: { key: "b" } }] }, "Done."]);
    const until = (check: (screen: string) => boolean, what: string): Promise<string> => tmux.until(session, check, what);
    await until((screen) => lastLine(screen) === approval("a"), "the first approval");
    // Now `search` asks, while the approval of erase(a) is on the screen (and erase(b)'s waits its turn).
    writeFileSync(files.go, "");
    expect(await waitUntil(() => existsSync(files.asked), 60_000), "search asked its question").toBe(true);
    expect(tmux.screen(session)).not.toContain(ELICITATION); // queued: nothing is printed under the approval
    tmux.keys(session, "n", "Enter");

    // The tool's question is shown next, alone: the cursor waits at its field, no approval below it.
    let screen = await until((text) => lastLine(text).endsWith(FIELD), "the tool's question, last on the screen");
    expect(screen).toContain(ELICITATION);
    expect(screen).not.toContain(approval("b"));
    tmux.keys(session, "y", "Enter");

    // Its y answered it alone: the approval of erase(b) is asked after it, and n refuses the call.
    screen = await until((text) => lastLine(text) === approval("b"), "the second approval, after the tool's question");
    expect(screen.indexOf(approval("b"))).toBeGreaterThan(screen.indexOf(FIELD));
    expect(JSON.parse(readFileSync(files.answer, "utf8"))).toEqual({ action: "accept", content: { more: true } });
    tmux.keys(session, "n", "Enter");
    screen = await until((text) => text.includes("EXIT="), "the end of the run");
    expect(screen).toContain("EXIT=0");
    expect(existsSync(files.outbox), "erase never ran").toBe(false);
    const messages = JSON.stringify(server!.requests[1]!.body.messages);
    expect(messages.match(/erase needs approval, and the call was refused; it did not run\./g)).toHaveLength(2);
    expect(messages).toContain('results for old: {\\"action\\":\\"accept\\",\\"content\\":{\\"more\\":true}}');
  }, 300_000);

  it("what is typed before a question is shown does not answer it: a y typed ahead does not approve the next call", async () => {
    const { tmux, session, files } = await startInTerminal([{ tool_calls: [{ name: "erase", arguments: { key: "a" } }, { name: "erase", arguments: { key: "b" } }] }, "Done."]);
    const until = (check: (screen: string) => boolean, what: string): Promise<string> => tmux.until(session, check, what);
    await until((screen) => lastLine(screen) === approval("a"), "the first approval");
    // One burst of keys: n for the question on the screen, and a y typed ahead of the next one.
    tmux.keys(session, "n", "Enter", "y", "Enter");
    await until((screen) => lastLine(screen) === approval("b"), "the second approval");
    tmux.keys(session, "n", "Enter");
    const screen = await until((text) => text.includes("EXIT="), "the end of the run");
    expect(screen).toContain("EXIT=0");
    expect(existsSync(files.outbox), "erase never ran").toBe(false);
    expect(JSON.stringify(server!.requests[1]!.body.messages).match(/erase needs approval, and the call was refused; it did not run\./g)).toHaveLength(2);
  }, 300_000);
});
