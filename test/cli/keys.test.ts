import { spawn } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

// Each case spawns the CLI several times: on a busy machine that takes more than the default 30 s.
vi.setConfig({ testTimeout: 240_000 });
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { BIN } from "../helpers/paths.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const FILE_KEY = "sk-from-the-keys-file-0123";
let server: MockOpenAIServer | undefined;
let echo: Server | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
  echo = undefined;
});

/** A home with the given keys stored through `lllm keys set`, as a user would. */
async function homeWithKeys(keys: Record<string, string>): Promise<string> {
  const home = tempDir("lllm-keys-home-");
  for (const [name, value] of Object.entries(keys)) {
    const result = await runCli(["keys", "set", name], { env: { LLLM_HOME: home }, input: `${value}\n` });
    expect(result.stderr).toMatch(/^lllm: stored [A-Z_]+ in /);
    expect(result.code, result.stderr).toBe(0);
  }
  return home;
}

const authorizations = (): Array<string | undefined> => server!.requests.filter((request) => request.method === "POST").map((request) => request.headers.authorization as string | undefined);

describe("lllm keys", () => {
  it("set (from standard input), list (names only), get, path, remove; the file is 0600 in a 0700 home", async () => {
    const home = await homeWithKeys({ OPENAI_API_KEY: FILE_KEY, anthropic: "sk-ant-file-key-0456" });
    const file = path.join(home, "keys.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ OPENAI_API_KEY: FILE_KEY, ANTHROPIC_API_KEY: "sk-ant-file-key-0456" });

    const list = await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } });
    expect(list).toMatchObject({ code: 0, stdout: "ANTHROPIC_API_KEY\nOPENAI_API_KEY\n" });
    // Spawned: lllm redacts every key it has read for the rest of its process, and in this one an earlier CLI may have
    // read this key; only a CLI of its own shows that the list leaves the value out.
    const listJson = await runCli(["keys", "list", "--json"], { env: { LLLM_HOME: home, OPENAI_API_KEY: "sk-env-wins-0789" } });
    expect(JSON.parse(listJson.stdout)).toEqual({ schema_version: 1, file, keys: [{ name: "ANTHROPIC_API_KEY", overridden_by_environment: false }, { name: "OPENAI_API_KEY", overridden_by_environment: true }] });
    expect(listJson.stdout + listJson.stderr).not.toContain(FILE_KEY);

    expect(await runCliInProcess(["keys", "get", "OPENAI_API_KEY"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0, stdout: `${FILE_KEY}\n` });
    expect(await runCliInProcess(["keys", "path"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0, stdout: `${file}\n` });

    expect(await runCliInProcess(["keys", "remove", "openai"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0 });
    const missing = await runCliInProcess(["keys", "get", "OPENAI_API_KEY"], { env: { LLLM_HOME: home } });
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`no key OPENAI_API_KEY in ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("a keys.json linked to a file elsewhere stays a link: set and remove write the file it leads to, 0600", async () => {
    const home = tempDir("lllm-keys-home-");
    const elsewhere = tempDir("lllm-keys-elsewhere-");
    const target = path.join(elsewhere, "secrets.json");
    writeFileSync(target, `{"OPENAI_API_KEY": "${FILE_KEY}"}\n`, { mode: 0o600 });
    const link = path.join(home, "keys.json");
    // Relative, as a dotfiles manager writes it: resolved from the link's folder, not the working one.
    const destination = path.relative(home, target);
    symlinkSync(destination, link);
    const keptLink = (): void => {
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toBe(destination);
      expect(statSync(target).mode & 0o777).toBe(0o600);
      // The temporary file was beside the target, and is gone.
      expect(readdirSync(elsewhere)).toEqual(["secrets.json"]);
      expect(readdirSync(home)).toEqual(["keys.json"]);
    };

    const set = await runCli(["keys", "set", "anthropic"], { env: { LLLM_HOME: home }, input: "sk-ant-linked-0456\n" });
    expect(set).toMatchObject({ code: 0, stderr: `lllm: stored ANTHROPIC_API_KEY in ${link} (the key of anthropic/ models)\n` });
    keptLink();
    expect(JSON.parse(readFileSync(target, "utf8"))).toEqual({ OPENAI_API_KEY: FILE_KEY, ANTHROPIC_API_KEY: "sk-ant-linked-0456" });

    expect(await runCliInProcess(["keys", "remove", "openai"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0 });
    keptLink();
    expect(JSON.parse(readFileSync(target, "utf8"))).toEqual({ ANTHROPIC_API_KEY: "sk-ant-linked-0456" });

    // The last key: the target is emptied, not the link removed (which would leave the key in the target).
    expect(await runCliInProcess(["keys", "remove", "anthropic"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0 });
    keptLink();
    expect(JSON.parse(readFileSync(target, "utf8"))).toEqual({});
    expect(await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0, stdout: "", stderr: `lllm: no keys in ${link} (add one with \`lllm keys set NAME\`)\n` });
  });

  it("a keys.json linked to nowhere, or to a folder, is refused (exit 2) by set and remove; the link is left as it is", async () => {
    const home = tempDir("lllm-keys-home-");
    const elsewhere = tempDir("lllm-keys-elsewhere-");
    const link = path.join(home, "keys.json");
    const missing = path.join(elsewhere, "secrets.json");
    symlinkSync(missing, link);
    const value = "sk-dangling-Qz7Wv9XyJk";
    const set = await runCli(["keys", "set", "OPENAI_API_KEY"], { env: { LLLM_HOME: home }, input: `${value}\n` });
    expect(set.code, set.stderr).toBe(2);
    expect(set.stderr).toContain(`lllm: error: the keys file ${link} is a link to ${missing}, which does not exist (or is a loop of links): nothing was written`);
    expect(set.stderr).toContain(`create that file (printf '{}' > ${missing} && chmod 600 ${missing}), point the link at an existing file, or remove the link to keep the keys in ${link} itself`);
    expect(set.stdout + set.stderr).not.toContain(value);
    const remove = await runCliInProcess(["keys", "remove", "OPENAI_API_KEY"], { env: { LLLM_HOME: home } });
    expect(remove.code, remove.stderr).toBe(2);
    expect(remove.stderr).toContain(`the keys file ${link} is a link to ${missing}, which does not exist`);
    expect(readlinkSync(link)).toBe(missing);
    expect(readdirSync(home)).toEqual(["keys.json"]);
    expect(readdirSync(elsewhere)).toEqual([]);

    mkdirSync(missing, { mode: 0o700 });
    const folder = await runCli(["keys", "set", "OPENAI_API_KEY"], { env: { LLLM_HOME: home }, input: `${value}\n` });
    expect(folder.code, folder.stderr).toBe(2);
    expect(folder.stderr).toContain(`the keys file ${link} is a link to ${missing}, which is not a regular file: nothing was written`);
    expect(folder.stdout + folder.stderr).not.toContain(value);
    expect(readlinkSync(link)).toBe(missing);
    expect(readdirSync(missing)).toEqual([]);
  });

  it("refuses a bad name and an empty value, storing nothing", async () => {
    const home = tempDir("lllm-keys-home-");
    const badName = await runCli(["keys", "set", "my-key"], { env: { LLLM_HOME: home }, input: "value-123456\n" });
    expect(badName.code, badName.stderr).toBe(2);
    expect(badName.stderr).toContain("`my-key` is not a variable name");
    const empty = await runCli(["keys", "set", "MY_KEY"], { env: { LLLM_HOME: home }, input: "" });
    expect(empty.code, empty.stderr).toBe(2);
    expect(empty.stderr).toContain("no value given for MY_KEY");
    expect(existsSync(path.join(home, "keys.json"))).toBe(false);
  });

  it("a name close to a provider's (opnai, OPENAI) is refused with the provider it is close to; nothing is stored (issue 30)", async () => {
    const home = tempDir("lllm-keys-home-");
    const typo = await runCli(["keys", "set", "opnai"], { env: { LLLM_HOME: home }, input: "sk-typo-123456\n" });
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toBe("lllm: error: `opnai` is not a provider: did you mean `openai` (stored as OPENAI_API_KEY)?\n  lllm keys set openai; a key is stored under the variable its readers ask for, such as OPENAI_API_KEY\n");
    const upper = await runCli(["keys", "set", "ANTHROPIC"], { env: { LLLM_HOME: home }, input: "sk-typo-123456\n" });
    expect(upper.code, upper.stderr).toBe(2);
    expect(upper.stderr).toContain("did you mean `anthropic` (stored as ANTHROPIC_API_KEY)?");
    expect(existsSync(path.join(home, "keys.json"))).toBe(false);
    // Any other variable name is stored as given (a proxy's api_key_env may be anything).
    const other = await runCli(["keys", "set", "weather_key"], { env: { LLLM_HOME: home }, input: "wk-123456\n" });
    expect(other).toMatchObject({ code: 0, stderr: `lllm: stored weather_key in ${path.join(home, "keys.json")}\n` });
  });

  it("a provider reads its key from the file; the environment wins over it", async () => {
    const home = await homeWithKeys({ OPENAI_API_KEY: FILE_KEY });
    server = await startMockOpenAIServer({ script: ["one", "two"] });
    const fromFile = await runCli(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home, OPENAI_BASE_URL: server.url } });
    expect(fromFile).toMatchObject({ code: 0, stdout: "one\n" });
    const fromEnvironment = await runCliInProcess(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-env-wins-0789" } });
    expect(fromEnvironment).toMatchObject({ code: 0, stdout: "two\n" });
    expect(authorizations()).toEqual([`Bearer ${FILE_KEY}`, "Bearer sk-env-wins-0789"]);
  });

  it("a tactic's api_key_env reads the file too", async () => {
    const home = await homeWithKeys({ MY_SERVER_KEY: "sk-my-server-key-0321" });
    server = await startMockOpenAIServer({ script: ["done"] });
    const dir = tempTree({ "t.yaml": `global: {model_name: gpt-test, invoker_config: {base_url: "${server.url}", api_key_env: MY_SERVER_KEY}}\nagent_configs:\n  - name: a\n    system_prompt: Hi.\n` });
    const result = await runCliInProcess(["run", path.join(dir, "t.yaml"), "-i", "hi"], { env: { LLLM_HOME: home } });
    expect(result).toMatchObject({ code: 0, stdout: "done\n" });
    expect(authorizations()).toEqual(["Bearer sk-my-server-key-0321"]);
  });

  it("a proxy's key comes from the file, and joins the redaction set: a server echoing it shows [redacted]", async () => {
    const home = await homeWithKeys({ WEATHER_API_KEY: "wk-proxy-key-0654" });
    const seen: string[] = [];
    echo = createServer((request, response) => {
      seen.push(request.url ?? "");
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ echoed: request.url }));
    });
    await new Promise<void>((resolve) => echo!.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/weather`;
    const result = await runCli(["proxy", "call", "weather_api/current/Tokyo", "-p", path.join(EXAMPLE, "weather"), "--no-cache"], { env: { LLLM_HOME: home, LLLM_PROXY_WEATHER_API_BASE_URL: base }, timeoutMs: 90_000 });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(seen).toEqual(["/weather/current/Tokyo?units=metric&api_key=wk-proxy-key-0654"]);
    expect(result.stdout).toContain("api_key=[redacted]");
    expect(result.stdout).not.toContain("wk-proxy-key-0654");
  });

  it("a keys file others may read, or that is not JSON, is refused with the file and the fix (exit 2)", async () => {
    const home = await homeWithKeys({ OPENAI_API_KEY: FILE_KEY });
    const file = path.join(home, "keys.json");
    chmodSync(file, 0o644);
    for (const args of [["run", loop, "-i", "hi"], ["keys", "list"], ["keys", "set", "OTHER_KEY"]]) {
      // `keys set` reads the value from standard input, which only a spawned CLI has.
      const result = args[1] === "set" ? await runCli(args, { env: { LLLM_HOME: home }, input: "v-12345678\n" }) : await runCliInProcess(args, { env: { LLLM_HOME: home } });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`the keys file ${file} may be read by others (mode 0644)`);
      expect(result.stderr).toContain(`chmod 600 ${file}`);
    }
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ OPENAI_API_KEY: FILE_KEY });
    writeFileSync(file, "{not json", { mode: 0o600 });
    chmodSync(file, 0o600);
    const bad = await runCliInProcess(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home } });
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain(`the keys file ${file} is not valid JSON`);
  });

  it("a refused keys file does not stop the commands that never read a key; models warns; run still stops", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    for (const [content, mode, problem] of [
      [`{"OPENAI_API_KEY": "${FILE_KEY}"}\n`, 0o644, "may be read by others (mode 0644)"],
      ["{not json", 0o600, "is not valid JSON"],
    ] as const) {
      writeFileSync(file, content, { mode: 0o600 });
      chmodSync(file, mode);
      for (const args of [["help"], ["help", "tactics"], ["schema", "tactic"], ["logs", "path"], ["logs", "-n", "1"], ["keys", "path"], ["completion", "bash"]]) {
        const result = await runCliInProcess(args, { env: { LLLM_HOME: home } });
        expect({ args, code: result.code }).toEqual({ args, code: 0 });
        expect(result.stderr).not.toContain("keys file");
        expect(result.stdout + result.stderr).not.toBe("");
      }
      const models = await runCliInProcess(["models", "--json"], { env: { LLLM_HOME: home } });
      expect(models.code, models.stderr).toBe(0);
      expect(models.stderr).toContain(`lllm: warning: the keys file ${file} ${problem}`);
      const openai = (JSON.parse(models.stdout) as { providers: Array<{ prefix: string; key_set: boolean }> }).providers.find((provider) => provider.prefix === "openai/");
      expect(openai?.key_set).toBe(false);
      const run = await runCliInProcess(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home } });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`the keys file ${file} ${problem}`);
    }
  });

  it("a keys file that is not JSON is named with the line and column of the fault, never with any part of a value", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    // A value pasted without quotes: Node's JSON.parse message quotes the text around the fault, i.e. the key.
    const value = "sk-Qz7Wv9XyJk4Lm2NpRt";
    writeFileSync(file, `{\n  "OPENAI_API_KEY": ${value}\n}\n`, { mode: 0o600 });
    for (const args of [["run", loop, "-i", "hi"], ["run", loop, "-i", "hi", "--json"], ["keys", "list"], ["doctor"], ["models"]]) {
      const result = await runCliInProcess([...args, "--verbose"], { env: { LLLM_HOME: home } });
      const printed = result.stdout + result.stderr;
      expect(printed, args.join(" ")).toContain(`the keys file ${file} is not valid JSON (line 2, column 21)`);
      for (let start = 0; start + 4 <= value.length; start++) expect(printed).not.toContain(value.slice(start, start + 4));
    }
  });

  it("a bad entry whose name is not a variable name (a key pasted as the name) is named by its line, never quoted", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    const value = "Qz7Wv9XyJk4Lm2NpRt8c";
    writeFileSync(file, `{\n  "ANTHROPIC_API_KEY": "${FILE_KEY}",\n  "OPENAI_API_KEY=sk-${value}": "",\n  "GEMINI_API_KEY": 5\n}\n`, { mode: 0o600 });
    for (const args of [["run", loop, "-i", "hi"], ["keys", "list"], ["doctor"], ["doctor", "--json"], ["models"]]) {
      const result = await runCliInProcess([...args, "--verbose"], { env: { LLLM_HOME: home } });
      const printed = result.stdout + result.stderr;
      expect(printed, args.join(" ")).toContain(`the keys file ${file} has a bad entry at line 3: each key must be a variable name`);
      for (let start = 0; start + 4 <= value.length; start++) expect(printed).not.toContain(value.slice(start, start + 4));
    }
    // A variable name with a value of the wrong type is named: it is no secret.
    writeFileSync(file, `{"ANTHROPIC_API_KEY": "${FILE_KEY}",\n "GEMINI_API_KEY": 5}\n`, { mode: 0o600 });
    const typed = await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } });
    expect(typed.stderr).toContain(`the keys file ${file} has a bad entry \`GEMINI_API_KEY\` (line 2): each key must be a variable name`);
  });

  it("a bad entry's hint is a fix that works on that file: editing it, not `lllm keys remove`", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    writeFileSync(file, `{"OPENAI_API_KEY": "${FILE_KEY}", "bad-name": "x"}\n`, { mode: 0o600 });
    const run = await runCliInProcess(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`the keys file ${file} has a bad entry at line 1:`);
    expect(run.stderr).toContain("edit the file (`lllm keys path` shows where)");
    expect(run.stderr).not.toContain("lllm keys remove");
    // What the hint says works: the path is printed even with the bad entry there.
    const where = await runCliInProcess(["keys", "path"], { env: { LLLM_HOME: home } });
    expect(where).toMatchObject({ code: 0, stdout: `${file}\n` });
  });

  it("a name is one of the file's own entries: `toString` is no key; `constructor` and `__proto__` are names like any other", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    const inherited = await runCliInProcess(["keys", "get", "toString"], { env: { LLLM_HOME: home } });
    expect(inherited).toMatchObject({ code: 2, stdout: "" });
    expect(inherited.stderr).toContain(`no key toString in ${file}`);
    for (const name of ["constructor", "__proto__"]) {
      // No "set in the environment too" note: process.env.constructor is Object's, not a variable someone set.
      expect(await runCli(["keys", "set", name], { env: { LLLM_HOME: home }, input: `value-of-${name}\n` })).toMatchObject({ code: 0, stderr: `lllm: stored ${name} in ${file}\n` });
    }
    expect(await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0, stdout: "__proto__\nconstructor\n" });
    expect(await runCliInProcess(["keys", "get", "__proto__"], { env: { LLLM_HOME: home } })).toMatchObject({ code: 0, stdout: "value-of-__proto__\n" });
  });

  it("a keys-file error names the file once (in its message, not again as a location before it)", async () => {
    const home = tempDir("lllm-keys-home-");
    const file = path.join(home, "keys.json");
    for (const [content, mode] of [[`{"OPENAI_API_KEY": "${FILE_KEY}"}`, 0o644], ["[1]", 0o600], ["{", 0o600], ['{"A": 1}', 0o600]] as const) {
      writeFileSync(file, content, { mode: 0o600 });
      chmodSync(file, mode);
      const result = await runCliInProcess(["run", loop, "-i", "hi"], { env: { LLLM_HOME: home } });
      expect(result.code, result.stderr).toBe(2);
      const [first] = result.stderr.split("\n");
      expect(first).toMatch(/^lllm: error: the keys file /);
      expect(first!.split(file)).toHaveLength(2);
    }
  });
});

describe("--env-file", () => {
  // Spawned: the command line is Node's too (Node 20 reads an `--env-file` after the script's name itself).
  it("loads a dotenv file (quotes, comments, export) for any command; the environment wins over it, it wins over the keys file", async () => {
    const home = await homeWithKeys({ OPENAI_API_KEY: FILE_KEY });
    server = await startMockOpenAIServer({ script: ["one", "two", "three"] });
    const dir = tempTree({ ".env": `# lllm settings\nexport OPENAI_BASE_URL=${server.url}\nOPENAI_API_KEY="sk-env-file-key 0987" # quoted, with a space\nOTHER='x'\n` });
    const envFile = path.join(dir, ".env");
    const fromEnvFile = await runCli(["run", loop, "-i", "hi", "--env-file", envFile], { env: { LLLM_HOME: home } });
    expect(fromEnvFile).toMatchObject({ code: 0, stdout: "one\n" });
    // Before the command's name too, as a global flag.
    const environmentWins = await runCli(["--env-file", envFile, "run", loop, "-i", "hi"], { env: { LLLM_HOME: home, OPENAI_API_KEY: "sk-env-wins-0789" } });
    expect(environmentWins).toMatchObject({ code: 0, stdout: "two\n" });
    writeFileSync(envFile, `OPENAI_BASE_URL=${server.url}\n`);
    const keysFileFills = await runCli(["run", loop, "-i", "hi", "--env-file", envFile], { env: { LLLM_HOME: home } });
    expect(keysFileFills).toMatchObject({ code: 0, stdout: "three\n" });
    expect(authorizations()).toEqual(["Bearer sk-env-file-key 0987", "Bearer sk-env-wins-0789", `Bearer ${FILE_KEY}`]);
  });

  it("a line without NAME=value is named by its number, never shown (it may hold a key); a quoted value's lines are not such lines", async () => {
    const dir = tempTree({ ".env": `OPENAI_API_KEY : sk-typo-secret-0123\nGOOD=1\nNOTE="a value\nover two lines"\n# a comment\nstray\n` });
    const envFile = path.join(dir, ".env");
    const result = await runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml"), "--env-file", envFile], { env: { LLLM_HOME: tempDir("lllm-home-") } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`lllm: warning: --env-file ${envFile}:1,6: lines without NAME=value, ignored`);
    expect(result.stderr).not.toContain("sk-typo-secret");
  });

  it("variables that load code (NODE_OPTIONS, BASH_ENV, LD_PRELOAD) are dropped with a warning: command tools never get them (issue 29, point 6)", async () => {
    const dir = tempTree({
      "pkg/tools/node_probe.yaml": "name: node_probe\ndescription: Run node\ncommand: [node, -e, \"process.stdout.write('node ok')\"]\n",
      "pkg/tools/bash_probe.yaml": "name: bash_probe\ndescription: Run bash\ncommand: [bash, -c, \"printf 'bash ok'\"]\n",
    });
    // Marks which process ran it: lllm's own (Node applies an --env-file's NODE_OPTIONS itself when it reads the
    // file), or a child lllm started.
    writeFileSync(path.join(dir, "evil.cjs"), `const own = String(process.argv[1]).endsWith("lllm.js");\nrequire("node:fs").writeFileSync(${JSON.stringify(dir)} + (own ? "/ran-in-lllm" : "/ran-in-tool"), "x");\n`);
    writeFileSync(path.join(dir, "evil.sh"), `echo x > ${dir}/ran-in-bash\n`);
    const envFile = path.join(dir, ".env");
    writeFileSync(envFile, `NODE_OPTIONS="--require ${dir}/evil.cjs"\nBASH_ENV=${dir}/evil.sh\nLD_PRELOAD=${dir}/nothing.so\nWEATHER_KEY=kept\n`);
    const warning = `lllm: warning: --env-file ${envFile}: ignored BASH_ENV, LD_PRELOAD, NODE_OPTIONS: a variable that makes programs load code is never taken from a dotenv file (nor passed to command tools, MCP servers or kernels). Started as \`node …/lllm.js\` (not as the \`lllm\` command), Node itself applies that NODE_OPTIONS to lllm's own process before lllm starts: remove it from the file`;
    for (const tool of ["node_probe", "bash_probe"]) {
      // As a user's shell runs it: the `lllm` command itself (bin/lllm.js, executable), with node on the PATH.
      const called = await runCommand(BIN, ["tools", "call", tool, "-p", path.join(dir, "pkg"), "--args", "{}", "--env-file", envFile]);
      expect(called.code, called.stderr).toBe(0);
      expect(called.stdout).toContain(tool === "node_probe" ? "node ok" : "bash ok");
      expect(called.stderr).toContain(warning);
    }
    expect(existsSync(path.join(dir, "ran-in-tool"))).toBe(false);
    expect(existsSync(path.join(dir, "ran-in-bash"))).toBe(false);
    // The `lllm` command starts Node with `--` before its script, so Node never reads the file itself.
    expect(existsSync(path.join(dir, "ran-in-lllm"))).toBe(false);
    // `node bin/lllm.js --env-file` (what the warning names) is not protected: Node applies the file's NODE_OPTIONS.
    const direct = await runCli(["models", "--env-file", envFile]);
    expect(direct.stderr).toContain(warning);
    expect(existsSync(path.join(dir, "ran-in-lllm"))).toBe(true);
  });

  // In process: Node 20 itself looks at every `--env-file` of the command line (after the script's name too) and
  // stops with "node: FILE: not found" (exit 9) before lllm starts; lllm's own check is what later Node versions show.
  it("a missing or unreadable file is a usage error naming it", async () => {
    const missing = await runCliInProcess(["models", "--env-file", "/nonexistent/.env"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("--env-file /nonexistent/.env: cannot read it (no such file)");
    const folder = await runCliInProcess(["models", "--env-file", tempDir()]);
    expect(folder.code, folder.stderr).toBe(2);
    expect(folder.stderr).toContain("cannot read it (it is a folder)");
  });
});

/** Run `file` as a program (its shebang decides how), in a clean environment with this Node on the PATH. */
function runCommand(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: tempDir("lllm-home-"), TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: tempDir("lllm-home-"), NO_COLOR: "1" };
    const child = spawn(file, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
