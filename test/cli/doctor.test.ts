import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

// Each case runs doctor (which probes the sandboxes) or the CLI several times: on a busy machine more than 30 s.
vi.setConfig({ testTimeout: 240_000 });
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { freePort } from "../helpers/freePort.js";
import { EXAMPLE, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

interface Report {
  schema_version: number;
  ok: boolean;
  tactic: string | null;
  checks: Array<{ name: string; status: "ok" | "warn" | "fail"; detail: string; fix?: string }>;
}

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const check = (report: Report, name: string): Report["checks"][number] | undefined => report.checks.find((entry) => entry.name === name);
const failed = (report: Report): string[] => report.checks.filter((entry) => entry.status === "fail").map((entry) => entry.name);

/** A PATH with the sandbox programs of this machine but no python3: what a machine without Python looks like. */
function pathWithoutPython(): string {
  const bin = tempDir("lllm-nopython-");
  for (const program of ["bwrap", "runsc", "setpriv"]) {
    for (const folder of (process.env.PATH ?? "").split(path.delimiter)) {
      const candidate = path.join(folder, program);
      if (folder !== "" && existsSync(candidate)) {
        symlinkSync(candidate, path.join(bin, program));
        break;
      }
    }
  }
  return bin;
}

/** A tactic whose agent runs Python (run_python over the weather proxy), on a model served at `url`. */
function pythonTactic(url: string): string {
  const dir = tempTree({
    "t.yaml": `packages: [${path.join(EXAMPLE, "weather")}]\nglobal: {model_name: gpt-test, invoker_config: {base_url: "${url}", api_key_env: DOCTOR_TEST_KEY}}\nagent_configs:\n  - name: analyst\n    system_prompt: Hi.\n    proxy: {activate_proxies: [weather_api], exec_env: interpreter}\n`,
  });
  return path.join(dir, "t.yaml");
}

/**
 * `lllm doctor --json`, in this process unless `spawned`: lllm finds Python and judges LLLM_CODE_CACHE once per
 * process, so a case that changes what those see needs a CLI of its own.
 */
async function doctor(args: string[], env: NodeJS.ProcessEnv = {}, options: { spawned?: boolean } = {}): Promise<{ code: number | null; report: Report; stderr: string }> {
  const result = options.spawned ? await runCli(["doctor", ...args, "--json"], { env, timeoutMs: 60_000 }) : await runCliInProcess(["doctor", ...args, "--json"], { env });
  return { code: result.code, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
}

describe("lllm doctor", () => {
  it("without python3 on PATH: a warning alone, exit 0; for a tactic that runs Python, a failure with the fix, exit 1", async () => {
    // Spawned: lllm looks for python3 once per process, and this one may have found it already.
    const PATH = pathWithoutPython();
    const plain = await doctor([], { PATH }, { spawned: true });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.report.ok).toBe(true);
    // The fields docs/scripting.md lists, a tactic or not (`tactic` was left out without one).
    expect(Object.keys(plain.report)).toEqual(["schema_version", "ok", "tactic", "checks"]);
    expect(plain.report.tactic).toBeNull();
    expect(check(plain.report, "python3")).toMatchObject({ status: "warn", fix: expect.stringContaining("apt-get install python3") });
    expect(check(plain.report, "node")).toMatchObject({ status: "ok", detail: `Node ${process.versions.node}` });

    server = await startMockOpenAIServer({ script: [] });
    const tactic = await doctor([pythonTactic(server.url)], { PATH, DOCTOR_TEST_KEY: "sk-doctor-test-0123", WEATHER_API_KEY: "wk-doctor-0456" }, { spawned: true });
    expect(tactic.code, tactic.stderr).toBe(1);
    expect(tactic.report.ok).toBe(false);
    expect(failed(tactic.report)).toContain("python3");
    expect(check(tactic.report, "python3")!.detail).toContain("not found on PATH");
    // The model's key and server, and the proxy's key, are there.
    expect(check(tactic.report, "key DOCTOR_TEST_KEY")).toMatchObject({ status: "ok", detail: "set (environment), for gpt-test" });
    expect(check(tactic.report, "key WEATHER_API_KEY")).toMatchObject({ status: "ok" });
    expect(check(tactic.report, `reach ${server.url}`)).toMatchObject({ status: "ok" });
    expect(JSON.stringify(tactic.report)).not.toContain("sk-doctor-test-0123");
  });

  it("with python3: the same tactic passes when its keys come from the keys file (exit 0, text report)", async () => {
    server = await startMockOpenAIServer({ script: [] });
    const home = tempDir("lllm-doctor-home-");
    for (const [name, value] of [["DOCTOR_TEST_KEY", "sk-doctor-test-0123"], ["WEATHER_API_KEY", "wk-doctor-0456"]] as const) {
      expect((await runCli(["keys", "set", name], { env: { LLLM_HOME: home }, input: value })).code).toBe(0);
    }
    const result = await runCliInProcess(["doctor", pythonTactic(server.url)], { env: { LLLM_HOME: home } });
    // A machine without a working sandbox fails this tactic for that reason alone, and says so.
    const sandboxMissing = /FAIL {2}(bubblewrap|gvisor)/.test(result.stdout);
    expect(result.code, result.stderr).toBe(sandboxMissing ? 1 : 0);
    expect(result.stdout).toMatch(/^ok {4}python3 +Python 3\./m);
    expect(result.stdout).toMatch(/^ok {4}key DOCTOR_TEST_KEY +set \(keys file\), for gpt-test$/m);
    expect(result.stdout).toMatch(/^ok {4}key WEATHER_API_KEY +set \(keys file\), for proxy weather_api$/m);
    if (!sandboxMissing) expect(result.stdout).toContain("Everything this tactic needs is here.");
  });

  it("a missing key, an unreachable server, a keys file others can read: each a failure with its fix", async () => {
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const home = tempDir("lllm-doctor-home-");
    const missingKey = await doctor([pythonTactic(closed)], { LLLM_HOME: home, WEATHER_API_KEY: "wk-doctor-0456" });
    expect(missingKey.code, missingKey.stderr).toBe(1);
    expect(check(missingKey.report, "model gpt-test")).toMatchObject({ status: "fail", fix: expect.stringContaining("lllm keys set DOCTOR_TEST_KEY") });

    const unreachable = await doctor([pythonTactic(closed)], { LLLM_HOME: home, DOCTOR_TEST_KEY: "sk-doctor-test-0123", WEATHER_API_KEY: "wk-doctor-0456" });
    expect(unreachable.code, unreachable.stderr).toBe(1);
    expect(check(unreachable.report, `reach ${closed}`)).toMatchObject({ status: "fail", detail: expect.stringContaining("cannot be reached (ECONNREFUSED)") });

    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, "keys.json"), "{}");
    chmodSync(path.join(home, "keys.json"), 0o644);
    const loose = await doctor([], { LLLM_HOME: home });
    expect(loose.code, loose.stderr).toBe(1);
    expect(check(loose.report, "keys file")).toMatchObject({ status: "fail", fix: `make it yours alone: chmod 600 ${path.join(home, "keys.json")}` });
  });

  it("LLLM_CODE_CACHE: the folder it names, and a warning with the fix when lllm would not use it", async () => {
    const home = tempDir("lllm-doctor-home-");
    const own = tempDir("lllm-doctor-cache-");
    // Spawned: the folder is judged once per process, and an in-process CLI would make it the test process's code cache.
    expect(check((await doctor([], { LLLM_HOME: home, LLLM_CODE_CACHE: own }, { spawned: true })).report, "code cache")).toMatchObject({ status: "ok", detail: `${own} (LLLM_CODE_CACHE)` });
    chmodSync(own, 0o777);
    const open = await doctor([], { LLLM_HOME: home, LLLM_CODE_CACHE: own }, { spawned: true });
    expect(open.code, open.stderr).toBe(0);
    expect(check(open.report, "code cache")).toMatchObject({ status: "warn", detail: expect.stringContaining(`LLLM_CODE_CACHE=${own} is not used: others may write to it (mode 0777)`), fix: expect.stringContaining("unset LLLM_CODE_CACHE") });
    expect(check((await doctor([], { LLLM_HOME: home, LLLM_CODE_CACHE: undefined }, { spawned: true })).report, "code cache")).toBeUndefined();
  });

  it("checks every model of an agent's chain: a fallback model's missing key is a failure", async () => {
    server = await startMockOpenAIServer({ script: [] });
    const dir = tempTree({ "t.yaml": `agent_configs:\n  - name: main\n    system_prompt: Hi.\n    model_name: gpt-4o-mini\n    fallback_models: [anthropic/claude-sonnet-4]\n` });
    const result = await doctor([path.join(dir, "t.yaml")], { LLLM_HOME: tempDir("lllm-doctor-home-"), OPENAI_API_KEY: "sk-doctor-0123", OPENAI_BASE_URL: server.url });
    expect(check(result.report, "key OPENAI_API_KEY")).toMatchObject({ status: "ok" });
    expect(check(result.report, "model anthropic/claude-sonnet-4")).toMatchObject({ status: "fail", fix: expect.stringContaining("ANTHROPIC_API_KEY") });
    expect(result.code, result.stderr).toBe(1);
  });

  it("counts one problem in the singular, in the text report", async () => {
    server = await startMockOpenAIServer({ script: [] });
    const dir = tempTree({ "t.yaml": `agent_configs:\n  - name: main\n    system_prompt: Hi.\n    model_name: gpt-4o-mini\n    fallback_models: [anthropic/claude-sonnet-4]\n` });
    const env = { LLLM_HOME: tempDir("lllm-doctor-home-"), OPENAI_API_KEY: "sk-doctor-0123", OPENAI_BASE_URL: server.url };
    const result = await runCliInProcess(["doctor", path.join(dir, "t.yaml")], { env });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout.match(/^FAIL /gm)).toHaveLength(1);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("1 problem stops this tactic (exit 1).");
  });

  it("--queue to a Redis that is not there fails with how to fix it", async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const result = await doctor(["--queue", url]);
    expect(result.code, result.stderr).toBe(1);
    expect(check(result.report, `redis ${url}`)).toMatchObject({ status: "fail", fix: expect.stringContaining("start Redis") });
  });
});
