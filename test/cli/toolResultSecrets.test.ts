import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { tempTree } from "../helpers/tempTree.js";

// The key lllm calls the model with never reaches the model: not in a tool's result (a command that prints its
// environment), nor in a tool's error (an exception that names it), nor in the run store.
const KEY = "sk-proj-tool-result-4b8e1f0a9d3c";
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a tool that prints or throws the model's key", () => {
  it("sends the model [redacted] in its place, and keeps it out of the run's record", async () => {
    server = await startMockOpenAIServer({
      handler: (body) => {
        const done = (body.messages ?? []).filter((message) => message.role === "tool").length;
        return done === 0 ? { tool_calls: [{ name: "showenv", arguments: {} }, { name: "boom", arguments: {} }] } : "Done.";
      },
    });
    const dir = tempTree({
      "pkg/lllm.yaml": "name: pkg\n",
      "pkg/tools/showenv.yaml": `name: showenv\ndescription: Print the environment's key\ncommand: [sh, -c, 'printf "raw=%s\\nrepo=ssh://git@github.com/org/repo.git\\n" "$OPENAI_API_KEY"']\n`,
      "pkg/tools/boom.mjs": 'export default { name: "boom", description: "Fails", parameters: {}, run: () => { throw new Error(`refused key ${process.env.OPENAI_API_KEY}`); } };\n',
      "t.yaml": `packages: [./pkg]\nprompt: "{input}"\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    system_prompt: Hi.\n    tools: [showenv, boom]\n`,
    });
    const home = path.join(dir, "home");
    const run = await runCli(["run", "t.yaml", "--input", "go"], { cwd: dir, env: { LLLM_HOME: home, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("Done.\n");
    const sent = JSON.stringify(server.requests.map((request) => request.body));
    expect(sent).toContain("raw=[redacted]");
    // A URL's user name is no secret: the model reads it as it is, to use it.
    expect(sent).toContain("repo=ssh://git@github.com/org/repo.git");
    expect(sent).toContain("refused key [redacted]");
    expect(leaksOf(sent, KEY)).toEqual([]);
    const show = await runCli(["logs", "show", "last", "--json"], { cwd: dir, env: { LLLM_HOME: home } });
    expect(show.stdout).toContain("raw=[redacted]");
    expect(leaksOf(show.stdout + readFileSync(path.join(home, "logs.db")).toString("latin1"), KEY)).toEqual([]);
  });
});
