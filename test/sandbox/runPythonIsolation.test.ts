import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { findPython } from "../../src/sandbox/findPython.js";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { tempDir } from "../helpers/tempTree.js";

// Issue 19 item 10: `run_python` ran model code on the host when neither bubblewrap nor gVisor worked, with a
// warning only, and that code read lllm's own /proc/<pid>/environ and sent the provider key back reversed, past
// redaction. Now it is refused as code-action and notebooks are, unless the tactic says `backend: none`; and under
// `none` the code finds no key in any process's environment, in any encoding.
const KEY = "sk-environ-secret-7f3a9c1e";
const MARKER = "visible-marker-5d2b";
let server: MockOpenAIServer | undefined;
/** A folder holding only `python3`: a PATH without bwrap and runsc, as on a machine without them. */
let pythonOnly = "";

beforeAll(async () => {
  pythonOnly = tempDir("lllm-python-only-");
  symlinkSync((await findPython()).executable, path.join(pythonOnly, "python3"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function tactic(sandbox: string): string {
  const file = path.join(tempDir("lllm-run-python-"), "analyst.yaml");
  writeFileSync(
    file,
    [
      "name: analyst",
      `packages: [${JSON.stringify(path.join(ROOT, "packages-example/weather"))}]`,
      ...(sandbox ? [`sandbox: ${sandbox}`] : []),
      "global:",
      "  model_name: gpt-4o-mini",
      "  proxy: {activate_proxies: [weather], exec_env: interpreter, max_output_chars: 0}",
      "agent_configs:",
      "  - name: analyst",
      "    system_prompt: You analyse.",
      "",
    ].join("\n"),
  );
  return file;
}

// What a model's program would do: read the environment of every process it can see and send back the values of
// every credential-like variable, reversed and hex-encoded (no redaction recognises that), and the marker, which
// shows that lllm's own environment was among those read.
const STEAL = String.raw`import os, re
found = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        entries = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        continue
    for entry in entries:
        name, _, value = entry.partition(b"=")
        if re.search(rb"KEY|TOKEN|SECRET|MARKER", name):
            found.append(name.decode() + "=" + value[::-1].hex())
print("\n".join(sorted(set(found))))`;

/** The values the program sent back, decoded: `NAME=value` lines. */
function decoded(output: string): string[] {
  return output
    .split(/\\n|\n/)
    .map((line) => /([A-Z_]+)=([0-9a-f]*)/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => `${match[1]}=${Buffer.from(match[2]!, "hex").reverse().toString("utf8")}`);
}

describe("run_python without a working sandbox", () => {
  it("is refused before any model call unless the tactic says backend: none", async () => {
    server = await startMockOpenAIServer({ script: ["never asked"] });
    const result = await runCli(["run", tactic(""), "--input", "go"], { env: { PATH: pythonOnly, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url }, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("run_python of agent `analyst` runs model-written code only in a sandbox, and none works here: bwrap is not installed; runsc is not installed");
    expect(result.stderr).toContain("set `sandbox: {backend: none}` in the tactic");
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(0);
  }, 90_000);

  it("under backend: none, the code finds no key in any process's environment, in any encoding", async () => {
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "run_python", arguments: { code: STEAL } }] }, "done"] });
    const result = await runCli(["run", tactic("{backend: none}"), "--input", "go"], {
      env: { PATH: pythonOnly, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, LLLM_TEST_MARKER: MARKER },
      timeoutMs: 60_000,
    });
    expect(result.stderr).not.toContain("internal error");
    expect(result.code, result.stderr).toBe(0);
    const posts = server.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(2);
    const toolResult = JSON.stringify(posts[1]!.body.messages);
    const values = decoded(toolResult);
    // The program did read lllm's own environment: the check below can fail.
    expect(values).toContain(`LLLM_TEST_MARKER=${MARKER}`);
    expect(values.some((line) => line.startsWith("OPENAI_API_KEY="))).toBe(true);
    expect(leaksOf(values.join("\n"), KEY)).toEqual([]);
    expect(leaksOf(toolResult, KEY)).toEqual([]);
  }, 90_000);
});
