import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { encodingsOf, leaksOf } from "../helpers/secretEncodings.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * A key with every URL-special character that changes under encoding (issue 9.2), and one with the characters JSON,
 * Python and HTML escape (`\"`, `\\`, `\'`, `&quot;`…): a tool result or a record holds them escaped.
 */
const KEY = "ab+c/d=9";
const KEYS = [KEY, `q"u\\o&t<e>'s 42`];
const PACKAGE = path.join(ROOT, "test", "proxies", "fixtures", "leakpkg");

interface Started {
  server: Server;
  url: string;
  seen: IncomingMessage[];
}

const servers: Server[] = [];
const folders: string[] = [];
let model: MockOpenAIServer | undefined;

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<Started> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    handler(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The key as the API received it, echoed back in every encoding it could come back in. */
function echo(request: IncomingMessage): string {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const key = url.searchParams.get("key") ?? String(request.headers["x-api-key"] ?? "");
  return JSON.stringify({ url: request.url, key, forms: Object.values(encodingsOf(key)), upper: (request.url ?? "").toUpperCase() });
}

/** The data API: echo, fail, hop (same-origin redirect) and away (redirect to `elsewhere`). */
async function startApi(elsewhere: string): Promise<Started> {
  return listen((request, response) => {
    const pathname = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    if (pathname.endsWith("/hop")) {
      response.writeHead(302, { location: `/api/echo${request.url?.includes("?") ? request.url.slice(request.url.indexOf("?")) : ""}` });
      return void response.end();
    }
    if (pathname.endsWith("/away")) {
      response.writeHead(302, { location: `${elsewhere}/steal` });
      return void response.end();
    }
    const status = pathname.endsWith("/fail") ? 500 : 200;
    response.writeHead(status, { "content-type": status === 200 ? "application/json" : "text/plain" });
    response.end(status === 200 ? echo(request) : `failed for ${echo(request)}`);
  });
}

function home(): string {
  const dir = tempDir("lllm-leak-home-");
  folders.push(dir);
  return dir;
}

/** Every file under `dir`, with its bytes as text. */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) found.push({ file, text: readFileSync(file, "utf8") });
  }
  return found;
}

afterEach(async () => {
  await model?.close();
  model = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

let api: Started;
let other: Started;
let env: NodeJS.ProcessEnv;
let lllmHome: string;
beforeEach(async () => {
  other = await listen((_request, response) => response.end(JSON.stringify({ stolen: true })));
  api = await startApi(other.url);
  lllmHome = home();
  env = { LLLM_HOME: lllmHome, ECHO_API_KEY: KEY, LLLM_PROXY_ECHO_BASE_URL: `${api.url}/api`, LLLM_PROXY_ECHOH_BASE_URL: `${api.url}/api` };
});

describe.each(KEYS)("proxy keys with URL-special characters never leave lllm (9.2): %s", (KEY) => {
  beforeEach(() => {
    env.ECHO_API_KEY = KEY;
  });

  it("proxy call: the answer, the cache files and --verbose stderr carry no form of the key", async () => {
    const result = await runCli(["--verbose", "proxy", "call", "echo/echo", "-p", PACKAGE], { env });
    expect(result.code, result.stderr).toBe(0);
    // The API did get the key (encoded in the query): only what comes back is redacted.
    expect(new URL(api.seen[0]!.url!, "http://x").searchParams.get("key")).toBe(KEY);
    expect(result.stdout).toContain("[redacted]");
    expect(leaksOf(result.stdout, KEY)).toEqual([]);
    expect(leaksOf(result.stderr, KEY)).toEqual([]);
    const cached = filesUnder(path.join(lllmHome, "cache"));
    expect(cached.length).toBeGreaterThan(0);
    for (const { file, text } of cached) expect(leaksOf(text, KEY), file).toEqual([]);
  });

  it("proxy_http_error messages carry no form of the key, also with --verbose", async () => {
    const result = await runCli(["--verbose", "proxy", "call", "echo/fail", "-p", PACKAGE], { env });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("failed with HTTP 500");
    expect(leaksOf(result.stderr + result.stdout, KEY)).toEqual([]);
    for (const { file, text } of filesUnder(lllmHome)) expect(leaksOf(text, KEY), file).toEqual([]);
  });

  it("through a run: what the model reads, --json output and stderr carry no form of the key", async () => {
    model = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "run_python", arguments: { code: 'print(CALL_API("echo/echo", {}))\ntry:\n    CALL_API("echo/fail", {})\nexcept Exception as error:\n    print("failed:", error)' } }] },
        "done",
      ],
    });
    const dir = home();
    const tactic = path.join(dir, "leak.yaml");
    writeFileSync(
      tactic,
      [
        "name: leak",
        `packages: [${JSON.stringify(PACKAGE)}]`,
        "global:",
        "  model_name: gpt-test",
        "agent_configs:",
        "  - name: analyst",
        "    system_prompt: You call APIs.",
        "    proxy:",
        "      activate_proxies: [echo]",
        "      exec_env: interpreter",
        "",
      ].join("\n"),
    );
    const result = await runCli(["--verbose", "run", tactic, "--input", "go", "--json"], { env: { ...env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url }, timeoutMs: 60_000 });
    expect(result.stderr).not.toContain("internal error");
    expect(result.code, result.stderr).toBe(0);
    const toolResult = JSON.stringify(model.requests.filter((request) => request.method === "POST")[1]!.body.messages);
    expect(toolResult).toContain("[redacted]");
    expect(toolResult).toContain("failed:");
    expect(leaksOf(toolResult, KEY)).toEqual([]);
    expect(leaksOf(result.stdout, KEY)).toEqual([]);
    expect(leaksOf(result.stderr, KEY)).toEqual([]);
    for (const { file, text } of filesUnder(lllmHome)) expect(leaksOf(text, KEY), file).toEqual([]);
  }, 90_000);
});

/**
 * What the API servers are asked does not depend on being a process of its own: these calls are the CLI's main() in
 * this process. The checks above, that nothing lllm prints or keeps holds the key, go through the built CLI (lllm
 * redacts for the rest of a process every secret it has read).
 */
describe("proxies never follow a redirect to another origin (9.3)", () => {
  it("follows a redirect within the API's origin", async () => {
    const result = await runCliInProcess(["proxy", "call", "echo/hop", "-p", PACKAGE, "--no-cache"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ url: expect.stringContaining("/api/echo") });
    expect(api.seen.map((request) => new URL(request.url!, "http://x").pathname)).toEqual(["/api/hop", "/api/echo"]);
  });

  it("refuses a redirect to another host, for a query key and for a header key, and says so", async () => {
    for (const target of ["echo/away", "echoh/away"]) {
      const result = await runCliInProcess(["proxy", "call", target, "-p", PACKAGE, "--no-cache"], { env });
      expect(result.code, target).toBe(1);
      expect(result.stderr).toContain("redirect");
      expect(result.stderr).toContain(other.url);
      expect(result.stderr).toContain("not followed");
      expect(result.stdout).not.toContain("stolen");
    }
    // The other server was never asked anything: neither the key nor the request reached it.
    expect(other.seen).toHaveLength(0);
  });

  it("keeps the header key on a same-origin redirect", async () => {
    const result = await runCliInProcess(["proxy", "call", "echoh/hop", "-p", PACKAGE, "--no-cache"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((request) => request.headers["x-api-key"])).toEqual([KEY, KEY]);
  });
});
