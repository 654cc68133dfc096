import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`, a devDependency),
 * run against lllm's client: the suite starts each scenario's server and runs `conformanceClient.mjs` (lllm's
 * public `McpConnections`, what tactics' `mcp_servers` use) with its URL. The suite needs Node 22+, which `.ci/run`
 * installs from npm and names in LLLM_NODE22.
 */
const NODE22 = process.env.LLLM_NODE22;
const SUITE = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const CLIENT = path.join(ROOT, "test", "mcp", "fixtures", "conformanceClient.mjs");

/** Every client scenario of the suite (0.1.16) that applies to lllm; each must pass. */
const EXPECTED_TO_PASS = [
  "initialize",
  "tools_call",
  "elicitation-sep1034-client-defaults",
  "sse-retry",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/client-credentials-jwt",
  "auth/client-credentials-basic",
];

/** Client scenarios that do not apply, each with the reason; the test checks the two lists cover the suite. */
const NOT_APPLICABLE: Record<string, string> = {
  "auth/cross-app-access-complete-flow":
    "an extension (SEP-990, enterprise-managed authorization): the client trades an enterprise IdP's ID token for an ID-JAG and then an access token; the MCP SDK (1.32) has no client for it and lllm has no IdP sign-in to take the ID token from",
};

interface Check {
  id: string;
  name: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: Record<string, unknown>;
}

interface ScenarioResult {
  checks: Check[];
  /** The client's stdout and stderr. */
  clientOutput: string;
}

/**
 * Run the suite's client command with `args` (`--scenario NAME` or `--suite NAME`) and `env`, the client finding Node
 * 22 first on PATH too. Resolves with the suite's exit code and output, and each scenario's results by its name.
 */
function runSuite(node: string, command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string; scenarios: Map<string, ScenarioResult> }> {
  const out = tempDir("lllm-conformance-");
  return new Promise((resolve, reject) => {
    const child = spawn(node, [SUITE, "client", "--command", command, ...args, "--timeout", "180000", "-o", out], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ""}`, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      // <out>/<scenario>-<time>/checks.json, where an auth scenario's name makes a sub-folder.
      const scenarios = new Map<string, ScenarioResult>();
      for (const file of readdirSync(out, { recursive: true }) as string[]) {
        if (path.basename(file) !== "checks.json") continue;
        const folder = path.join(out, path.dirname(file));
        const name = path.dirname(file).split(path.sep).join("/").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
        const clientOutput = ["stdout.txt", "stderr.txt"].map((part) => (existsSync(path.join(folder, part)) ? readFileSync(path.join(folder, part), "utf8") : "")).join("\n");
        scenarios.set(name, { checks: JSON.parse(readFileSync(path.join(folder, "checks.json"), "utf8")) as Check[], clientOutput });
      }
      resolve({ code, output, scenarios });
    });
  });
}

/** Run one scenario, its client's OAuth state in a home of its own; resolves with what the suite and the client said. */
async function runScenario(node: string, scenario: string, options: { command?: string; home?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; output: string; checks: Check[]; clientOutput: string }> {
  const home = options.home ?? tempDir("lllm-conformance-home-");
  const { code, output, scenarios } = await runSuite(node, options.command ?? `${node} ${CLIENT}`, ["--scenario", scenario], { LLLM_HOME: home, ...options.env });
  const result = scenarios.get(scenario);
  return { code, output, checks: result?.checks ?? [], clientOutput: result?.clientOutput ?? "" };
}

/**
 * Run every client scenario of the suite at once, in one run of the suite (`--suite all`: one suite process instead
 * of one a scenario, about half the CPU of this file), each client with a home of its own (CONFORMANCE_HOMES, read by
 * the client).
 */
function runEveryScenario(node: string): ReturnType<typeof runSuite> {
  return runSuite(node, `${node} ${CLIENT}`, ["--suite", "all"], { CONFORMANCE_HOMES: tempDir("lllm-conformance-homes-") });
}

/**
 * A check that failed for a reason lllm controls. sse-retry measures how long the client waited before it
 * reconnected (the server's `retry: 500`); on a busy machine a timer fires late, which is the machine, not the
 * client: a late reconnection is tolerated, an early one (ignoring `retry`) is not.
 */
function isRealFailure(check: Check): boolean {
  if (check.status !== "FAILURE") return false;
  return !(check.id === "client-sse-retry-timing" && check.details?.tooEarly === false);
}

const missing = NODE22 === undefined || !existsSync(NODE22);
if (missing && process.env.CI === "true") {
  describe("MCP conformance suite, client scenarios", () => {
    it("needs Node 22 (LLLM_NODE22)", () => {
      throw new Error(`LLLM_NODE22 must name a Node 22+ binary for the conformance suite (got ${JSON.stringify(NODE22)}); .ci/run installs one from npm`);
    });
  });
}

describe.skipIf(missing)("MCP conformance suite, client scenarios (lllm as a client)", () => {
  it("lists every client scenario of the suite as expected to pass or not applicable", async () => {
    const listed = await new Promise<string>((resolve, reject) => {
      const child = spawn(NODE22!, [SUITE, "list", "--client"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    const scenarios = [...listed.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!);
    expect(scenarios.length).toBeGreaterThan(0);
    expect([...scenarios].sort()).toEqual([...EXPECTED_TO_PASS, ...Object.keys(NOT_APPLICABLE)].sort());
  }, 60_000);

  // One run of the suite for all of them, started by the first test that asks. Every scenario is mostly waiting on
  // local HTTP round trips; all at once on a loaded machine, each client gets 180 s, the test 300.
  let everyScenario: ReturnType<typeof runEveryScenario> | undefined;
  it.concurrent.each(EXPECTED_TO_PASS)("%s passes", async (scenario) => {
    everyScenario ??= runEveryScenario(NODE22!);
    const { output, scenarios } = await everyScenario;
    const result = scenarios.get(scenario);
    // The suite's own log is long: the lines of this scenario's client say what went wrong.
    expect(result, output.slice(-4000)).toBeDefined();
    const { checks, clientOutput } = result!;
    const tail = clientOutput.slice(-4000);
    expect(checks.length, tail).toBeGreaterThan(0);
    const failures = checks.filter(isRealFailure).map((check) => `${check.name}: ${check.errorMessage ?? check.status}`);
    expect(failures, tail).toEqual([]);
  }, 300_000);
});

describe.skipIf(missing)("`lllm mcp tools` against an OAuth-protected server (the suite's auth/metadata-default)", () => {
  it("signs in through $BROWSER, keeps the tokens in $LLLM_HOME with 0600, and prints no token", async () => {
    const home = tempDir("lllm-oauth-home-");
    const browser = path.join(ROOT, "test", "mcp", "fixtures", "headlessBrowser.mjs");
    const { output, checks, clientOutput } = await runScenario(NODE22!, "auth/metadata-default", {
      command: `${NODE22} ${BIN} mcp tools`,
      home,
      env: { BROWSER: `${NODE22} ${browser}` },
    });
    const tail = output.slice(-4000);
    expect(checks.filter(isRealFailure).map((check) => check.name), tail).toEqual([]);
    expect(checks.some((check) => check.id === "authorization-request" || /authoriz/i.test(check.name)), tail).toBe(true);
    // The tool list is the answer; the URL to open is on stderr, as a person would need it.
    expect(clientOutput).toMatch(/^test-tool\b/m);
    expect(clientOutput).toContain("Open this URL to sign in: http://");
    const folder = path.join(home, "mcp", "oauth");
    const files = readdirSync(folder);
    expect(files).toHaveLength(1);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(folder, files[0]!)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(path.join(folder, files[0]!), "utf8")) as { tokens?: { access_token?: string } };
    const token = stored.tokens?.access_token;
    expect(typeof token === "string" && token.length > 0).toBe(true);
    expect(clientOutput).not.toContain(token!);
  }, 300_000);

  it("without a terminal or $BROWSER, says the server needs a sign-in and how to do it", async () => {
    const { clientOutput } = await runScenario(NODE22!, "auth/metadata-default", { command: `${NODE22} ${BIN} mcp tools`, env: { BROWSER: "" } });
    expect(clientOutput).toContain("needs a sign-in (OAuth), and there is no terminal to sign in from");
    expect(clientOutput).toContain("lllm mcp tools <url>");
    expect(clientOutput).not.toContain("Open this URL");
  }, 300_000);
});
