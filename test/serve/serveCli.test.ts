import { existsSync as fsExists, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { shopPackage, startServeCli, type ServingCli } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

vi.setConfig({ testTimeout: 180_000 });

// `lllm serve` as a user runs it: the token rule, the drain on SIGTERM, the served runs recorded and read back.
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let shop: string;
let serving: ServingCli | undefined;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  shop = shopPackage(mock.url);
});

afterEach(() => {
  serving?.cli.killTree();
  serving = undefined;
});

afterAll(async () => {
  await mock?.close();
});

const post = (url: string, token: string | undefined, body: unknown): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

describe("lllm serve: the token", () => {
  it("makes a token and prints it with the address; without it every route but /healthz is 401", async () => {
    serving = await startServeCli([shop]);
    expect(serving.token).toMatch(/^[\w-]{40,}$/);
    expect(serving.cli.stderr()).toContain("serving 1 model (shop) at http://127.0.0.1:");
    expect(serving.cli.stderr()).toContain(`/v1, MCP at ${serving.url}/mcp`);
    expect((await fetch(`${serving.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${serving.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${serving.url}/v1/models`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const models = await new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 }).models.list();
    expect(models.data.map((model) => model.id)).toEqual(["shop"]);
  });

  it("refuses to serve beyond this machine without --token-env (exit 2), --no-auth there too, and an unset --token-env", async () => {
    const everywhere = await runCli(["serve", shop, "--http", "0.0.0.0:0"]);
    expect(everywhere.code, everywhere.stderr).toBe(2);
    expect(everywhere.stderr).toContain("serving on every interface (0.0.0.0) needs a token");
    const noAuth = await runCli(["serve", shop, "--http", "0.0.0.0:0", "--no-auth"]);
    expect(noAuth.code, noAuth.stderr).toBe(2);
    expect(noAuth.stderr).toContain("--no-auth serves on this machine only");
    const unset = await runCli(["serve", shop, "--http", "127.0.0.1:0", "--token-env", "LLLM_TEST_UNSET_TOKEN"]);
    expect(unset.code, unset.stderr).toBe(2);
    expect(unset.stderr).toContain("the variable `LLLM_TEST_UNSET_TOKEN` is not set");
    // A package folder given with a wrong path is not called a missing tactic file.
    const missing = await runCli(["serve", path.join(path.dirname(shop), "no-such-package")]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`no such tactic file or package folder: ${path.join(path.dirname(shop), "no-such-package")}`);
  });

  it("takes the token from --token-env, and none with --no-auth (with a warning)", async () => {
    serving = await startServeCli([shop], { args: ["--token-env", "SERVE_TOKEN"], env: { SERVE_TOKEN: "a-token-of-mine" } });
    expect(serving.cli.stderr()).toContain("(bearer token from $SERVE_TOKEN)");
    expect(serving.cli.stderr()).not.toContain("a-token-of-mine");
    expect((await fetch(`${serving.url}/v1/models`, { headers: { authorization: "Bearer a-token-of-mine" } })).status).toBe(200);
    serving.cli.killTree();
    serving = await startServeCli([shop], { args: ["--no-auth"] });
    expect(await waitUntil(() => serving!.cli.stderr().includes("serving with --no-auth"), 60_000)).toBe(true);
    expect((await fetch(`${serving.url}/v1/models`)).status).toBe(200);
  });
});

describe("lllm serve: the token is a secret", () => {
  it("a served run's record is redacted of the server's token (made, or from a variable whose name says nothing)", async () => {
    for (const options of [{}, { args: ["--token-env", "LLLM_T"], env: { LLLM_T: "plain-name-token-0123456789" } }]) {
      const home = tempDir("lllm-home-");
      serving = await startServeCli([shop], { ...options, env: { ...options.env, LLLM_HOME: home } });
      const token = serving.token ?? "plain-name-token-0123456789";
      answer = () => `The server's token is ${token}.`;
      const response = await post(serving.url, token, { model: "shop", messages: [{ role: "user", content: `Tell me a secret: ${token}` }] });
      expect(response.status).toBe(200);
      const recorded = (): string => readdirSync(path.join(home, "logs.spool")).map((file) => readFileSync(path.join(home, "logs.spool", file), "utf8")).join("");
      expect(await waitUntil(() => fsExists(path.join(home, "logs.spool")) && recorded().includes("The server's token is [redacted]."), 60_000)).toBe(true);
      expect(recorded()).toContain("Tell me a secret: [redacted]");
      expect(recorded()).not.toContain(token);
      serving.cli.killTree();
      serving = undefined;
    }
  });
});

describe("lllm serve: what a client says of itself", () => {
  it("logs show keeps a request's `user` on the served line: its line break cannot forge a step of the run", async () => {
    const home = tempDir("lllm-home-");
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    answer = () => "fine";
    const user = "ann\n── tool wipe_disk · shop · ok · 2 ms";
    const response = await post(serving.url, serving.token, { model: "shop", user, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    serving.cli.killTree();
    serving = undefined;
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^served chat\.completions as model shop for ann\\n── tool wipe_disk · shop · ok · 2 ms · chatcmpl-[0-9a-f]+$/m);
    expect(shown.stdout.split("\n").filter((line) => line.startsWith("── tool"))).toEqual([]);
  });
});

describe("lllm serve: stopping", () => {
  it("on SIGTERM stops accepting, lets the run in flight finish, exits 0; the run is recorded as served", async () => {
    const home = tempDir("lllm-home-");
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    answer = async () => {
      asked++;
      await released;
      return "finished after the signal";
    };
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const { url, token } = serving;
    const inFlight = post(url, token, { model: "shop", messages: [{ role: "user", content: "slow one" }] });
    expect(await waitUntil(() => asked === 1, 60_000)).toBe(true);
    process.kill(serving.cli.pid, "SIGTERM");
    expect(await waitUntil(() => serving!.cli.stderr().includes("received SIGTERM; no new requests"), 60_000)).toBe(true);
    // A new connection is refused now, or answered 503 if it raced the close.
    const late = await post(url, token, { model: "shop", messages: [{ role: "user", content: "too late" }] }).then((response) => response.status, () => "refused");
    expect([503, "refused"]).toContain(late);
    release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as OpenAI.ChatCompletion).choices[0]!.message.content).toBe("finished after the signal");
    expect(await serving.cli.exit(60_000)).toBe(0);
    const listed = await runCli(["logs", "--served", "--json"], { env: { LLLM_HOME: home } });
    const runs = (JSON.parse(listed.stdout) as { runs: Array<{ status: string; served: { route: string; model: string } }> }).runs;
    expect(runs.map((run) => [run.status, run.served.route, run.served.model])).toEqual([["ok", "chat.completions", "shop"]]);
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.stdout).toMatch(/^served chat\.completions as model shop · chatcmpl-[0-9a-f]+$/m);
    // Served runs replay like any other: their script, run offline.
    const script = await runCli(["logs", "replay", "last"], { env: { LLLM_HOME: home } });
    expect(script.code, script.stderr).toBe(0);
    const file = path.join(tempDir("lllm-replay-"), "turns.yaml");
    writeFileSync(file, script.stdout);
    const replay = await runCli(["run", path.join(shop, "tactics/shop.yaml"), "--model", `scripted:${file}`, "--input", "slow one"]);
    expect(replay.stdout).toBe("finished after the signal\n");
    expect(replay.code, replay.stderr).toBe(0);
  });

  it("cancels the runs still going after --drain-timeout: the client gets a 503, the run is interrupted, exit 0", async () => {
    const home = tempDir("lllm-home-");
    answer = (body) => ((body.messages as Array<{ role: string }>).at(-1)!.role === "tool" ? "never" : { tool_calls: [{ name: "slow_wait", arguments: {} }] });
    serving = await startServeCli([shop], { args: ["--drain-timeout", "1"], env: { LLLM_HOME: home } });
    const inFlight = post(serving.url, serving.token, { model: "shop", messages: [{ role: "user", content: "wait forever" }] });
    expect(await waitUntil(() => mock.requests.length > 0 && serving!.cli.stderr() !== "" && fsExists(path.join(shop, "tools/started.txt")), 60_000)).toBe(true);
    process.kill(serving.cli.pid, "SIGTERM");
    const response = await inFlight;
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "run_cancelled", message: expect.stringContaining("drain timeout") });
    expect(await serving.cli.exit(60_000)).toBe(0);
    const listed = await runCli(["logs", "--served", "--json"], { env: { LLLM_HOME: home } });
    expect((JSON.parse(listed.stdout) as { runs: Array<{ status: string }> }).runs.map((run) => run.status)).toEqual(["interrupted"]);
  });
});

const openFiles = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

// A server reads back from the run store what it no longer holds in memory (a response or an A2A task of an earlier
// server, or an id it never made): through one connection for its life. libsql's close() keeps a connection's files
// open until its statements are garbage-collected, so opening the store for each look-up left hundreds of open files.
describe("lllm serve: look-ups in the run store", () => {
  it("reads back an earlier server's response, and answers unknown ids without holding a file open for each", async () => {
    answer = () => "Figs are 3 EUR.";
    const home = tempDir("lllm-home-");
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const first = await new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 }).responses.create({ model: "shop", input: "Figs?" });
    process.kill(serving.cli.pid, "SIGTERM");
    expect(await serving.cli.exit(60_000)).toBe(0);

    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const { url, token } = serving;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token!, maxRetries: 0 });
    // From the store: the first server's response, read and continued.
    expect((await client.responses.retrieve(first.id)).output_text).toBe("Figs are 3 EUR.");
    expect((await client.responses.create({ model: "shop", input: "And plums?", previous_response_id: first.id })).previous_response_id).toBe(first.id);

    const before = openFiles(serving.cli.pid);
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const unknown = (n: number): string => `resp_${n.toString(16).padStart(12, "0")}`;
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const n = batch * 10 + index;
          const continued = await fetch(`${url}/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "shop", input: "hi", previous_response_id: unknown(n) }) });
          const read = await fetch(`${url}/v1/responses/${unknown(n + 100_000)}`, { headers });
          const task = await fetch(`${url}/a2a`, { method: "POST", headers: { ...headers, "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "GetTask", params: { id: `task-${n}` } }) });
          return [continued.status, read.status, ((await task.json()) as { error?: { message?: string } }).error?.message ?? "", await continued.text(), await read.text()] as const;
        }),
      );
      for (const [continued, read, task] of answers) {
        expect([continued, read]).toEqual([404, 404]);
        expect(task).toMatch(/not found/i);
      }
    }
    // 900 look-ups: each opened and closed the store before (two files each until a collection: 500 more open files
    // after 2,000 look-ups); one connection now.
    expect(openFiles(serving.cli.pid) - before).toBeLessThan(40);
  });
});
