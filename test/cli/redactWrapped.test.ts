import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { decodableLeaks } from "../helpers/secretEncodings.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";

// A tool that prints a key through `base64` (wrapped at 76 columns), `xxd -p` (60) or `od` left it whole and
// decodable in `logs show --json` and in logs.db (model_calls, tool_calls, tool_journal): each form was redacted only
// when it stood on one line. A credential-like variable of the environment is a known secret.
const KEY = "sk-wrapped-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const DUMP = [
  'printf "%s" "$DEMO_SERVICE_TOKEN" | base64',
  'printf "user:%s" "$DEMO_SERVICE_TOKEN" | base64',
  'printf "%s" "$DEMO_SERVICE_TOKEN" | xxd -p',
  'printf "%s" "$DEMO_SERVICE_TOKEN" | od -A n -t x1',
  "echo END-OF-DUMP",
].join("; ");

describe("a key a command tool prints wrapped in base64 or hex", () => {
  it("is in neither `logs show --json` nor logs.db in any decodable form", async () => {
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "dump", arguments: {} }] }, "Done."] });
    const dir = tempDir("lllm-wrapped-");
    const home = path.join(dir, "home");
    writeTree(dir, {
      "lllm.yaml": "name: dumper\nversion: 0.1.0\n",
      "tools/dump.yaml": `name: dump\ndescription: Prints the token encoded.\ncommand: [sh, -c, ${JSON.stringify(DUMP)}]\nparameters: {}\n`,
      "t.yaml": "name: t\npackages: [.]\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    tools: [dump]\n",
    });
    const env = { LLLM_HOME: home, OPENAI_API_KEY: "sk-test-key-000000", OPENAI_BASE_URL: server.url, DEMO_SERVICE_TOKEN: KEY };
    const run = await runCli(["run", "t.yaml", "--input", "hi"], { cwd: dir, env, timeoutMs: 60_000 });
    expect(run.stderr).toBe("");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Done.");
    // The tool ran with the key and printed it: the model saw every form (what it is sent is not redacted).
    const sent = JSON.stringify(server.requests.map((request) => request.body));
    expect(sent).toContain("END-OF-DUMP");
    // The model reads none of the forms either: a tool's result loses every key lllm knows before it is sent.
    expect(decodableLeaks(sent, KEY)).toEqual([]);

    const show = await runCli(["logs", "show", "last", "--json"], { cwd: dir, env: { LLLM_HOME: home } });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("END-OF-DUMP");
    expect(show.stdout).toContain("[redacted]");
    expect(decodableLeaks(show.stdout, KEY)).toEqual([]);
    for (const file of ["logs.db", "logs.db-wal"]) {
      const where = path.join(home, file);
      if (!existsSync(where)) continue;
      const bytes = readFileSync(where).toString("latin1");
      expect({ file, leaks: decodableLeaks(bytes, KEY) }).toEqual({ file, leaks: [] });
    }
    expect(readFileSync(path.join(home, "logs.db")).toString("latin1")).toContain("END-OF-DUMP");
  }, 120_000);
});
