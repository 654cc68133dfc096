import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RunStore } from "../../src/store/RunStore.js";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { serveInProcess, shopPackage, type ServingLibrary } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

vi.setConfig({ testTimeout: 120_000 });

// What guards a served model: limits, the line of waiting requests, a client that goes away, bad requests, the
// token and the Host check. Errors are checked with curl, as a user would see them.
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let shop: string;
let home: string;
const servers: ServingLibrary[] = [];

beforeAll(async () => {
  home = tempDir("lllm-home-");
  vi.stubEnv("LLLM_HOME", home);
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  shop = shopPackage(mock.url);
});

afterAll(async () => {
  for (const serving of servers) await serving.server.stop({ drainTimeoutMs: 0 });
  await mock?.close();
});

async function start(options: Partial<Parameters<typeof serveInProcess>[0]> = {}): Promise<ServingLibrary> {
  const serving = await serveInProcess({ tactics: [path.join(shop, "tactics/shop.yaml")], token: "t0ken-for-tests", ...options });
  servers.push(serving);
  return serving;
}

const clientOf = (serving: ServingLibrary, headers: Record<string, string> = {}): OpenAI => new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: "t0ken-for-tests", maxRetries: 0, defaultHeaders: headers });
const lastOf = (body: MockRequestBody): { role: string; content?: string } => (body.messages as Array<{ role: string; content?: string }>).at(-1)!;

function storedRuns() {
  if (!existsSync(path.join(home, "logs.db")) && !existsSync(path.join(home, "logs.spool"))) return [];
  const store = RunStore.openSync(path.join(home, "logs.db"));
  try {
    return store.listRuns({ limit: 1000 });
  } finally {
    store.close();
  }
}

/** curl's answer: the status, the headers (lower-cased names) and the body. */
function curl(args: string[]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    execFile("curl", ["-s", "-i", ...args], { maxBuffer: 10 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(error);
      const [head, ...rest] = stdout.split("\r\n\r\n");
      const lines = head!.split("\r\n");
      const headers = Object.fromEntries(lines.slice(1).map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(lines[0]!.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
  });
}

describe("limits", () => {
  // A first reply of 4,900 tokens leaves no room for the next call under 5,000: the run stops before it.
  const expensive = (body: MockRequestBody): ScriptedTurn => (lastOf(body).role === "tool" ? "done" : { text: "Let me look.", tool_calls: [{ name: "lookup_price", arguments: { item: "plum" } }], usage: { prompt_tokens: 4000, completion_tokens: 900 } });

  it("a request stops at the server's ceiling: a 400 naming the limit, with the answer so far", async () => {
    const serving = await start({ limits: { maxTokens: 5000 } });
    answer = expensive;
    const result = await curl([`${serving.url}/v1/chat/completions`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "content-type: application/json", "-d", JSON.stringify({ model: "shop", messages: [{ role: "user", content: "plums?" }] })]);
    expect(result.status).toBe(400);
    const error = (JSON.parse(result.body) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ type: "limit_reached", code: "max_tokens", param: null, partial_output: "Let me look.", limit: { name: "max_tokens", value: 5000 } });
    expect(storedRuns()[0]).toMatchObject({ status: "budget" });
  });

  it("a client lowers a limit for its request (header or metadata), and never raises it", async () => {
    answer = expensive;
    const roomy = await start({ limits: { maxTokens: 100_000 } });
    // The message names where the limit was set: the client's header, not a flag of the CLI.
    await expect(clientOf(roomy, { "X-Lllm-Max-Tokens": "5000" }).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "plums?" }] })).rejects.toMatchObject({ status: 400, code: "max_tokens", error: { limit: { value: 5000 } }, message: expect.stringContaining("(5,000 tokens, header x-lllm-max-tokens)") });
    await expect(clientOf(roomy).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "plums?" }], metadata: { lllm_max_tokens: "5000" } })).rejects.toMatchObject({ status: 400, code: "max_tokens", error: { limit: { value: 5000 } } });
    expect((await clientOf(roomy).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "plums?" }] })).choices[0]!.message.content).toBe("done");
    const tight = await start({ limits: { maxTokens: 5000 } });
    await expect(clientOf(tight, { "X-Lllm-Max-Tokens": "100000000" }).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "plums?" }] })).rejects.toMatchObject({ status: 400, code: "max_tokens", error: { limit: { value: 5000 } }, message: expect.stringContaining("(5,000 tokens, lllm serve --max-tokens)") });
    await expect(clientOf(tight, { "X-Lllm-Max-Tokens": "lots" }).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({ status: 400, code: "invalid_limit" });
  });
});

describe("concurrency", () => {
  it("runs at most --concurrency at once, lets --max-waiting wait, refuses the rest with 429 and Retry-After; all get an answer", async () => {
    const serving = await start({ concurrency: 1, maxWaiting: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    answer = async () => {
      calls++;
      await released;
      return "served";
    };
    const request = (): Promise<{ status: number; headers: Record<string, string>; body: string }> => curl([`${serving.url}/v1/chat/completions`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "content-type: application/json", "-d", JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x" }] })]);
    const first = request();
    await waitUntil(() => calls === 1, 60_000);
    const second = request();
    expect(await waitForMetric(serving, "lllm_serve_requests_waiting", 1)).toBe(true);
    const flood = await Promise.all(Array.from({ length: 10 }, () => request()));
    expect(flood.map((result) => result.status)).toEqual(Array(10).fill(429));
    expect(flood[0]!.headers["retry-after"]).toBe("1");
    expect(JSON.parse(flood[0]!.body)).toMatchObject({ error: { type: "rate_limit_error", code: "server_busy" } });
    release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(calls).toBe(2);
  });
});

/** Wait until a gauge of /metrics reads `value` (or a minute passes); whether it did. */
async function waitForMetric(serving: ServingLibrary, name: string, value: number): Promise<boolean> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    const text = await (await fetch(`${serving.url}/metrics`, { headers: { authorization: "Bearer t0ken-for-tests" } })).text();
    if (new RegExp(`^${name} ${value}$`, "m").test(text)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

describe("a client that goes away", () => {
  it("cancels its run: the running tool is aborted and the run is recorded as interrupted", async () => {
    const serving = await start();
    answer = (body) => (lastOf(body).role === "tool" ? "never" : { tool_calls: [{ name: "slow_wait", arguments: {} }] });
    const controller = new AbortController();
    const response = await fetch(`${serving.url}/v1/chat/completions`, { method: "POST", signal: controller.signal, headers: { authorization: "Bearer t0ken-for-tests", "content-type": "application/json" }, body: JSON.stringify({ model: "shop", messages: [{ role: "user", content: "wait" }], stream: true }) });
    expect(response.status).toBe(200);
    expect(await waitUntil(() => existsSync(path.join(shop, "tools/started.txt")), 60_000)).toBe(true);
    controller.abort();
    expect(await waitUntil(() => existsSync(path.join(shop, "tools/aborted.txt")), 60_000)).toBe(true);
    expect(await waitUntil(() => storedRuns()[0]?.status === "interrupted", 60_000)).toBe(true);
    expect(storedRuns()[0]!.error_message).toContain("the client closed the connection");
  });
});

/** The JSON of an object nested `depth` deep: {"a": {"a": … 1}}. */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("bad requests", () => {
  it("each gets its 4xx in OpenAI's shape, nothing reaches the store, and the server goes on serving", async () => {
    const serving = await start({ maxBodyBytes: 2000, bodyTimeoutMs: 1000 });
    // A server whose body limit lets a deeply nested body in.
    const deep = start().then((roomy) => roomy.url);
    const before = storedRuns().length;
    const post = (body: string, headers: string[] = ["-H", "content-type: application/json"]): ReturnType<typeof curl> => curl([`${serving.url}/v1/chat/completions`, "-H", "authorization: Bearer t0ken-for-tests", ...headers, "--data-binary", body]);
    const cases: Array<[Promise<{ status: number; body: string }>, number, Record<string, unknown>]> = [
      [post("{not json"), 400, { code: "invalid_json" }],
      [post('{"model":"shop"}', ["-H", "content-type: text/plain"]), 415, { code: "unsupported_media_type" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x" }], bogus: 1 })), 400, { code: "unknown_parameter", param: "bogus" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x" }], temperature: "hot" })), 400, { code: "invalid_type", param: "temperature" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: 5 }] })), 400, { code: "invalid_type", param: "messages[0].content" }],
      // Of the type the field takes, but no provider takes them (its 400 was the client's 502).
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x" }], stop: [1, 2] })), 400, { code: "invalid_type", param: "stop" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x" }], max_tokens: -1 })), 400, { code: "invalid_value", param: "max_tokens" }],
      [curl([`${serving.url}/v1/responses`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "content-type: application/json", "-d", JSON.stringify({ model: "shop", input: "x", max_output_tokens: 0 })]), 400, { code: "invalid_value", param: "max_output_tokens" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "system", content: "be nice" }] })), 400, { code: "no_user_message", param: "messages" }],
      [post(JSON.stringify({ model: "shop" })), 400, { code: "missing_required_parameter", param: "messages" }],
      [post(JSON.stringify({ model: "nope", messages: [{ role: "user", content: "x" }] })), 404, { code: "model_not_found", param: "model" }],
      [post(JSON.stringify({ model: "shop", messages: [{ role: "user", content: "x".repeat(3000) }] })), 413, { code: "request_too_large" }],
      // Nested past what the run's walks of a request take (a client tool's parameters thousands deep were a 500).
      [deep.then((url) => curl([`${url}/v1/chat/completions`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "content-type: application/json", "--data-binary", `{"model":"shop","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"nested","parameters":${nested(10_000)}}}]}`])), 400, { code: "invalid_json" }],
      [curl([`${serving.url}/v1/chat/completions`, "-H", "content-type: application/json", "-d", "{}"]), 401, { code: "invalid_api_key" }],
      [curl([`${serving.url}/v1/nowhere`, "-H", "authorization: Bearer t0ken-for-tests"]), 404, { code: "not_found" }],
      [curl([`${serving.url}/v1/models/%E0%A4%A`, "-H", "authorization: Bearer t0ken-for-tests"]), 400, { code: "invalid_path" }],
      [curl([`${serving.url}/v1/chat/completions`, "-H", "authorization: Bearer t0ken-for-tests"]), 405, { code: "method_not_allowed" }],
      [curl([`${serving.url}/v1/models`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "Host: evil.example.com"]), 403, { code: "forbidden_host" }],
      [curl([`${serving.url}/v1/models`, "-H", "authorization: Bearer t0ken-for-tests", "-H", "Origin: http://evil.example.com"]), 403, { code: "forbidden_host" }],
    ];
    for (const [pending, status, error] of cases) {
      const result = await pending;
      expect({ status: result.status, error: (JSON.parse(result.body) as { error: Record<string, unknown> }).error }).toMatchObject({ status, error });
      expect(JSON.parse(result.body).error.message).toEqual(expect.any(String));
    }
    // A client that sends its headers and then too little of its body, too slowly: a 408, on its own connection.
    const slow = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(serving.url).port), "127.0.0.1", () => socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken-for-tests\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`));
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
    });
    expect(slow).toMatch(/^HTTP\/1\.1 408/);
    expect(slow).toContain('"code":"request_timeout"');
    expect(storedRuns().length).toBe(before);
    answer = () => "still here";
    expect((await clientOf(serving).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }] })).choices[0]!.message.content).toBe("still here");
  });

  it("a browser's preflight gets the headers it asks for (the openai SDK's own among them), for the allowed origin only", async () => {
    const serving = await start({ corsOrigin: "http://127.0.0.1:8098" });
    const asked = "authorization, content-type, x-stainless-os, x-stainless-retry-count";
    const preflight = await curl(["-X", "OPTIONS", `${serving.url}/v1/chat/completions`, "-H", "origin: http://127.0.0.1:8098", "-H", "access-control-request-method: POST", "-H", `access-control-request-headers: ${asked}`]);
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("http://127.0.0.1:8098");
    expect(preflight.headers["access-control-allow-headers"]).toBe(asked);
    const foreign = await curl(["-X", "OPTIONS", `${serving.url}/v1/chat/completions`, "-H", "origin: http://127.0.0.1:9999", "-H", "access-control-request-method: POST"]);
    expect(foreign.status).not.toBe(204);
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("serve({token}) with an unset variable or a blank token refuses to start rather than let every caller in", async () => {
    const tactics = [path.join(shop, "tactics/shop.yaml")];
    for (const token of [process.env.LLLM_TEST_UNSET_TOKEN, "", " \u00a0"]) {
      await expect(serveInProcess({ tactics, token })).rejects.toMatchObject({ code: "serve_token_missing", message: expect.stringContaining("every caller would be let in") });
    }
  });

  it("one tactic given twice is one model, under its name (not its file's path)", async () => {
    const file = path.join(shop, "tactics/shop.yaml");
    const serving = await start({ tactics: [file, file] });
    expect((await clientOf(serving).models.list()).data.map((model) => model.id)).toEqual(["shop"]);
  });

  it("an input the tactic's schema refuses is the client's error (400), not the server's", async () => {
    writeFileSync(path.join(shop, "tactics/typed.yaml"), "name: typed\npackages: [..]\ninput: {type: object, properties: {item: {type: string}}, required: [item]}\nprompt: \"Price of {input}\"\nagent_configs:\n  - name: clerk\n    system_prompt: You are a shop clerk.\n    model_name: gpt-test\n    invoker_config: {base_url: \"" + mock.url + "\"}\n");
    const serving = await start({ tactics: [path.join(shop, "tactics/typed.yaml")] });
    const error = await clientOf(serving).chat.completions.create({ model: "typed", messages: [{ role: "user", content: "Paris" }] }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: "input_invalid", param: "messages" });
    answer = () => "3 EUR";
    const answered = await clientOf(serving).chat.completions.create({ model: "typed", messages: [{ role: "user", content: '{"item": "pen"}' }] });
    expect(answered.choices[0]!.message.content).toBe("3 EUR");
  });

  it("a client that goes away before its body's end is no failure of the server: nothing on its stderr", async () => {
    const serving = await start();
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
    try {
      const socket = connect(Number(new URL(serving.url).port), "127.0.0.1", () => socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken-for-tests\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`, () => socket.destroy()));
      const left = async (): Promise<boolean> => (await curl([`${serving.url}/metrics`, "-H", "authorization: Bearer t0ken-for-tests"])).body.includes('lllm_serve_requests_total{route="/v1/chat/completions",model="",status="499"} 1');
      expect(await waitUntil(left, 60_000)).toBe(true);
    } finally {
      stderr.mockRestore();
    }
    expect(written.join("")).not.toMatch(/request \S+ failed/);
  });

  it("/healthz needs no token; /metrics counts requests by route, model and status", async () => {
    const serving = await start();
    const health = await curl([`${serving.url}/healthz`]);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ok" });
    answer = () => "ok";
    await clientOf(serving).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }] });
    expect((await curl([`${serving.url}/metrics`])).status).toBe(401);
    const metrics = await curl([`${serving.url}/metrics`, "-H", "authorization: Bearer t0ken-for-tests"]);
    expect(metrics.headers["content-type"]).toContain("text/plain; version=0.0.4");
    expect(metrics.body).toContain('lllm_serve_requests_total{route="/v1/chat/completions",model="shop",status="200"} 1');
    expect(metrics.body).toMatch(/^lllm_serve_tokens_total\{model="shop",kind="prompt"\} [1-9]\d*$/m);
    expect(metrics.body).toMatch(/^lllm_serve_request_duration_seconds_count\{route="\/v1\/chat\/completions",model="shop"\} 1$/m);
    expect(metrics.body).toContain("# TYPE lllm_serve_runs_in_flight gauge");
    // A client that leaves before the answer is counted as 499, not as the 200 nothing was sent with.
    let release: () => void = () => undefined;
    answer = () => new Promise<ScriptedTurn>((resolve) => (release = () => resolve("late")));
    const gone = new AbortController();
    const posted = mock.requests.filter((request) => request.method === "POST").length;
    const leaving = clientOf(serving).chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }] }, { signal: gone.signal }).catch(() => "left");
    expect(await waitUntil(() => mock.requests.filter((request) => request.method === "POST").length > posted, 60_000)).toBe(true);
    gone.abort();
    expect(await leaving).toBe("left");
    const counted = async (): Promise<string> => (await curl([`${serving.url}/metrics`, "-H", "authorization: Bearer t0ken-for-tests"])).body;
    expect(await waitUntil(async () => (await counted()).includes('lllm_serve_requests_total{route="/v1/chat/completions",model="shop",status="499"} 1'), 60_000)).toBe(true);
    expect(await counted()).toContain('lllm_serve_requests_total{route="/v1/chat/completions",model="shop",status="200"} 1');
    release();
  });
});
