import { describe, expect, it, vi } from "vitest";
import { BIN, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// Each case runs the CLI, some with an MCP server: on a busy machine more than the default 30 s. The first of each
// command (`tools list`, `mcp tools`, `proxy list`) spawns the built CLI, end to end; the others run its main() in
// this process, whose stdout and stderr are captured as the binary's (every text checked here is lllm's own print).
vi.setConfig({ testTimeout: 120_000 });

// Issue 19 item 20: text from a package or an MCP server (tool names and descriptions, results, errors, proxy docs)
// reached the terminal with its raw escapes: a description could set the window title, clear the screen, recolour
// or reverse what follows. Every such text is printed with its control characters escaped; JSON stays the same
// data for a parser.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const DESCRIPTION = "Looks fine\u001b]0;pwned\u0007\u001b[2J\u009b31mRED\u202eevil";

const PACKAGE = {
  "lllm.yaml": "name: evil\nversion: 0.1.0\n",
  "tools/evil.mjs": `import { tool } from "lllm";
export const evil = tool({
  name: "evil",
  description: ${JSON.stringify(DESCRIPTION)},
  parameters: { fail: { type: "boolean" } },
  run: ({ fail }) => {
    if (fail) throw new Error("bad\\u001b[2Jthing\\u001b]0;title\\u0007");
    return "result\\u001b[2J\\u001b]0;t\\u0007done";
  },
});
`,
  "tools/decl.yaml": 'name: decl\ndescription: "decl\\e[2J\\e]0;x\\a"\nparameters:\n  a: {type: string}\n',
  "proxies/api.yaml": 'path: api\nname: "API\\e]0;pwned\\a"\ndescription: "docs\\e[2J here"\nbase_url: http://127.0.0.1:9\nendpoints:\n  - category: all\n    endpoint: "things"\n    description: "list\\e[31m things"\n    params: {}\n',
};

function expectNoRawControl(text: string): void {
  expect(text).not.toMatch(RAW_CONTROL);
}

describe("text from a package or an MCP server, printed", () => {
  it("`tools list`: names and descriptions with their escapes written out", async () => {
    const dir = tempTree(PACKAGE);
    const result = await runCli(["tools", "list", "-p", dir]);
    expect(result.code, result.stderr).toBe(0);
    expectNoRawControl(result.stdout);
    expect(result.stdout).toContain("evil.tools:evil  Looks fine\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31mRED\\u202eevil");
    expect(result.stdout).toContain("evil.tools:decl  decl\\u001b[2J\\u001b]0;x\\u0007 (declaration)");
  });

  it("`tools list --json` and `tools show`: the same data, no raw control character", async () => {
    const dir = tempTree(PACKAGE);
    const listed = await runCliInProcess(["tools", "list", "-p", dir, "--json"]);
    expectNoRawControl(listed.stdout);
    const tools = (JSON.parse(listed.stdout) as { tools: Array<{ name: string; description: string }> }).tools;
    expect(tools.find((tool) => tool.name === "evil")?.description).toBe(DESCRIPTION);
    const shown = await runCliInProcess(["tools", "show", "evil.tools:evil", "-p", dir]);
    expectNoRawControl(shown.stdout);
    expect((JSON.parse(shown.stdout) as { function: { description: string } }).function.description).toBe(DESCRIPTION);
  });

  it("`tools call`: the result, the error and its --verbose details", async () => {
    const dir = tempTree(PACKAGE);
    const called = await runCliInProcess(["tools", "call", "evil.tools:evil", "-p", dir, "--args", '{"fail": false}']);
    expect(called.code, called.stderr).toBe(0);
    expectNoRawControl(called.stdout);
    expect(called.stdout).toContain("result\\u001b[2J\\u001b]0;t\\u0007done");
    const failed = await runCliInProcess(["tools", "call", "evil.tools:evil", "-p", dir, "--args", '{"fail": true}', "--verbose"]);
    expect(failed.code, failed.stderr).toBe(1);
    expectNoRawControl(failed.stdout);
    expectNoRawControl(failed.stderr);
    expect(failed.stdout).toContain("Error: bad\\u001b[2Jthing\\u001b]0;title\\u0007");
    expect(failed.stderr).toContain("bad\\u001b[2Jthing");
  });

  it("`mcp tools`: a server's tool names and descriptions", async () => {
    const dir = tempTree(PACKAGE);
    // The server's environment is the MCP SDK's short list (HOME, PATH…) and what --env adds: a home of its own, not
    // the user's ~/.lllm.
    const server = ["--env", `LLLM_HOME=${tempDir("lllm-home-")}`, "--env", `LLLM_CODE_CACHE=${process.env.LLLM_CODE_CACHE ?? ""}`, "--", process.execPath, BIN, "mcp", "serve", dir];
    const result = await runCli(["mcp", "tools", ...server], { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expectNoRawControl(result.stdout);
    expect(result.stdout).toContain("evil  Looks fine\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31mRED\\u202eevil");
    const json = await runCliInProcess(["mcp", "tools", "--json", ...server]);
    expectNoRawControl(json.stdout);
    expect(json.stdout).toContain("\\u009b31mRED\\u202eevil");
  }, 90_000);

  it("`proxy list` and `proxy docs`", async () => {
    const dir = tempTree(PACKAGE);
    const listed = await runCli(["proxy", "list", "-p", dir]);
    expect(listed.code, listed.stderr).toBe(0);
    expectNoRawControl(listed.stdout);
    expect(listed.stdout).toContain("API\\u001b]0;pwned\\u0007");
    const docs = await runCliInProcess(["proxy", "docs", "api", "-p", dir]);
    expect(docs.code, docs.stderr).toBe(0);
    expectNoRawControl(docs.stdout);
    expect(docs.stdout).toContain("docs\\u001b[2J here");
  });
});
