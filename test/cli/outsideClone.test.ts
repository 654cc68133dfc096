import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ROOT, cleanEnv } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";

// npm install -g, then the installed CLI (each allowed a minute): on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

/** Using lllm as a user outside the clone would, following docs/getting-started.md (the library example of docs/library.md runs in test/docs/examples.test.ts). */
afterEach(() => removeTempDirs());

describe("lllm outside the clone", () => {
  it("npm install -g <clone> gives an lllm that runs an own package's .ts tool from any folder", () => {
    const prefix = tempDir("lllm-prefix-");
    // A global install of a folder is a link to it: nothing is downloaded. --ignore-scripts: dist/ is built already.
    execFileSync("npm", ["install", "-g", "--prefix", prefix, "--ignore-scripts", "--no-audit", "--no-fund", ROOT], { env: cleanEnv(), stdio: "pipe", timeout: 120_000 });
    const lllm = path.join(prefix, "bin", "lllm");
    const work = tempDir("lllm-elsewhere-");
    mkdirSync(path.join(work, "tools"));
    writeFileSync(path.join(work, "tools", "shout.ts"), 'import { tool, z } from "lllm";\nexport default tool({ name: "shout", description: "Upper-case a text", parameters: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() });\n');
    writeFileSync(path.join(work, "tactic.yaml"), "packages: [.]\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    system_prompt: You shout.\n    tools: [shout]\n");
    writeFileSync(path.join(work, "turns.yaml"), "- tool_calls:\n    - {name: shout, arguments: {text: hello}}\n- text: done\n");
    const called = spawnSync(lllm, ["tools", "call", "shout", "-p", ".", "--args", '{"text": "hi"}'], { cwd: work, env: cleanEnv(), encoding: "utf8", timeout: 60_000 });
    expect(called.stderr).toBe("");
    expect(called).toMatchObject({ status: 0, stdout: "Return of calling function shout with arguments {'text': 'hi'}:\n---\nHI\n---\n" });
    const ran = spawnSync(lllm, ["run", "tactic.yaml", "--model", "scripted:turns.yaml", "--input", "x", "--json"], { cwd: work, env: cleanEnv(), encoding: "utf8", timeout: 60_000 });
    expect(ran.status).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ output: "done", tool_calls: [{ name: "shout", result: "HELLO" }] });
  });
});
