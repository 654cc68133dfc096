import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

// The CLI keeps the data of config files it parsed in $LLLM_HOME/cache/yaml, so that a later run does not load
// the yaml library at all. What a user must still get: the same answers and the same file:line:col in errors.
const dir = tempDir("lllm-yaml-cache-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cacheFiles = (home: string): string[] => {
  const folder = path.join(home, "cache", "yaml");
  return existsSync(folder) ? readdirSync(folder) : [];
};

describe("the parse cache of config files", () => {
  it("gives the same error, at the same line and column, when the file's data comes from the cache", async () => {
    const home = path.join(dir, "home-errors");
    const file = path.join(dir, "typo.yaml");
    writeFileSync(file, "name: typo\nprompt: \"{input}\"\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n    max_interupt_steps: 3\n");
    const first = await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(first.code, first.stderr).toBe(2);
    expect(first.stderr).toContain("typo.yaml:6:5");
    expect(cacheFiles(home).length).toBeGreaterThan(0);
    const second = await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(second).toEqual(first);
  });

  it("is keyed by the text: an edited file is read afresh", async () => {
    const home = path.join(dir, "home-edit");
    const file = path.join(dir, "edited.yaml");
    writeFileSync(file, "name: edited\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n");
    expect((await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } })).code).toBe(0);
    writeFileSync(file, "name: edited\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n    colour: blue\n");
    const edited = await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(edited.code, edited.stderr).toBe(2);
    expect(edited.stderr).toContain("edited.yaml:8:5");
  });

  it("never keeps a text that holds a secret of the environment", async () => {
    const home = path.join(dir, "home-secret");
    const key = "sk-cachedsecret-0123456789abcdef";
    const file = path.join(dir, "secret.yaml");
    writeFileSync(file, `name: secret\nprompt: "{input}"\nglobal:\n  invoker_config: {api_key: "${key}"}\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n`);
    await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined, OPENAI_API_KEY: key } });
    for (const name of cacheFiles(home)) expect(readFileSync(path.join(home, "cache", "yaml", name), "utf8")).not.toContain(key);
    expect(cacheFiles(home).some((name) => readFileSync(path.join(home, "cache", "yaml", name), "utf8").includes("secret"))).toBe(false);
  });

  it("never keeps data that may hold a credential written in the file itself", async () => {
    const home = path.join(dir, "home-literal");
    const file = path.join(dir, "literal.yaml");
    writeFileSync(
      file,
      "name: literal\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {api_key: sk-literal-abc123}\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n" +
        "    mcp_servers:\n      - {name: remote, url: \"http://127.0.0.1:9/mcp\", headers: {Authorization: Bearer tok-literal-456}}\n",
    );
    await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    for (const name of cacheFiles(home)) {
      const text = readFileSync(path.join(home, "cache", "yaml", name), "utf8");
      expect(text).not.toContain("sk-literal-abc123");
      expect(text).not.toContain("tok-literal-456");
    }
  });

  it("keeps lllm's built-in proxies, whose `api_key_env` names a variable, and still no package's proxy that names one", async () => {
    const home = path.join(dir, "home-builtins");
    const weather = path.join(ROOT, "packages-example", "weather");
    // A process of its own: the built-ins are read once per process, and this worker may have read them already.
    const listed = await runCli(["proxy", "list", "-p", weather], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("fred");
    const kept = cacheFiles(home).map((name) => readFileSync(path.join(home, "cache", "yaml", name), "utf8"));
    // All six built-ins: each start of `lllm serve` or of a code-action run parsed them with the yaml library.
    for (const variable of ["FRED_API_KEY", "FMP_API_KEY", "EXA_API_KEY", "WA_API_DEV", "MSD_API_KEY", "SEARCH_API_KEY"]) {
      expect(kept.some((text) => text.includes(`"${variable}"`)), variable).toBe(true);
    }
    expect(kept.some((text) => text.includes("WEATHER_API_KEY"))).toBe(false);
    // The second run reads them from the cache and lists the same.
    const again = await runCli(["proxy", "list", "-p", weather], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    expect(again.stdout).toBe(listed.stdout);
  });

  it("keeps only what JSON gives back as it was: a YAML 1.1 date reads the same on every run", async () => {
    const home = path.join(dir, "home-date");
    const file = path.join(dir, "dated.yaml");
    writeFileSync(file, "%YAML 1.1\n---\nname: dated\ndescription: 2001-12-14\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n");
    const first = await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } });
    // YAML 1.1 reads the value as a date, not a string: the same answer whether or not a cache was written.
    expect(first.code, first.stderr).toBe(2);
    expect(first.stderr).toContain("description must be a string");
    expect(await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } })).toEqual(first);
  });

  it("is not used in a folder another user could write to", async () => {
    const home = path.join(dir, "home-open");
    const folder = path.join(home, "cache", "yaml");
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o777);
    const file = path.join(dir, "open.yaml");
    writeFileSync(file, "name: open\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n");
    expect((await runCliInProcess(["validate", file], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined } })).code).toBe(0);
    expect(readdirSync(folder)).toEqual([]);
  });

  it("lets a second run of a tactic start without loading the yaml library", async () => {
    const home = path.join(dir, "home-load");
    const list = path.join(dir, "modules.txt");
    const hook = path.join(dir, "list-modules.cjs");
    writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join("\\n")));\n`);
    const file = path.join(dir, "plain.yaml");
    writeFileSync(file, "name: plain\nprompt: \"{input}\"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n");
    const env = { LLLM_HOME: home, LLLM_CODE_CACHE: undefined, NODE_OPTIONS: `--require ${hook}` };
    const loadsYaml = () => readFileSync(list, "utf8").split("\n").some((module) => /[\\/]yaml(\.cjs|[\\/])/.test(module));
    expect((await runCli(["validate", file], { env })).code).toBe(0);
    expect(loadsYaml()).toBe(true); // the first run parses, so the check can see yaml being loaded
    expect((await runCli(["validate", file], { env })).code).toBe(0);
    expect(loadsYaml()).toBe(false);
  });
});
