import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";
import { FIXTURE } from "./helpers.js";

vi.setConfig({ testTimeout: 120_000 });

/**
 * `${NAME}` in a stdio server's `env`, through `lllm run` as a user writes it: read from lllm's environment, strictly.
 * The checks that a value is redacted go through the built CLI (lllm redacts for the rest of a process every secret
 * it has read); the config error is the CLI's main() in this process.
 */

const SECRET = "value-of-the-service-credential-42";

function project(): { tactic: string; turns: string; home: string } {
  const dir = tempDir("lllm-mcp-env-");
  const tactic = path.join(dir, "tactic.yaml");
  writeFileSync(
    tactic,
    [
      "name: envcheck",
      'prompt: "{input}"',
      "agent_configs:",
      "  - name: worker",
      "    system_prompt: Check the server's environment.",
      "    model_name: gpt-test",
      "    mcp_servers:",
      "      - name: fx",
      `        command: ${JSON.stringify(process.execPath)}`,
      `        args: [${JSON.stringify(FIXTURE)}]`,
      "        env:",
      '          SERVICE_TOKEN: "${LLLM_TEST_SERVICE_VALUE}"', // line 12
      '          GREETING: "hello ${LLLM_TEST_WHO:-world}"',
      '          LITERAL: "$${HOME}"', // short: a longer value given to a server is redacted like a credential (below)
      "        allowed_tools: [env]",
      "",
    ].join("\n"),
  );
  const turns = path.join(dir, "turns.yaml");
  writeFileSync(
    turns,
    [
      "- tool_calls:",
      "    - {name: env, arguments: {name: SERVICE_TOKEN}}",
      "    - {name: env, arguments: {name: GREETING}}",
      "    - {name: env, arguments: {name: LITERAL}}",
      "- text: checked",
      "",
    ].join("\n"),
  );
  return { tactic, turns, home: tempDir("lllm-home-") };
}

describe("a stdio MCP server's env: ${NAME} from lllm's environment", () => {
  it("passes the variable's value (redacted everywhere lllm shows it), a default, and a literal $${", async () => {
    const { tactic, turns, home } = project();
    const run = await runCli(["run", tactic, "--model", `scripted:${turns}`, "--input", "go"], { env: { LLLM_HOME: home, LLLM_TEST_SERVICE_VALUE: SECRET } });
    expect(run.stderr).not.toContain("error");
    expect(run.stderr).not.toContain(SECRET);
    expect(run.stdout).toBe("checked\n");
    expect(run.code, run.stderr).toBe(0);
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    // The server saw the secret (its answer held it); the log shows it redacted, as a credential's value.
    expect(shown.stdout).toMatch(/^ +\[redacted\]$/m);
    expect(shown.stdout).not.toContain(SECRET);
    expect(shown.stdout).toMatch(/^ +hello world$/m);
    expect(shown.stdout).toMatch(/^ +\$\{HOME\}$/m);
  });

  it("an unset variable without a default is a config error naming the file, the line and the variable", async () => {
    const { tactic, turns, home } = project();
    const run = await runCliInProcess(["run", tactic, "--model", `scripted:${turns}`, "--input", "go"], { env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`${tactic}:12:`);
    expect(run.stderr).toContain("MCP server `fx`: env `SERVICE_TOKEN` names the variable `LLLM_TEST_SERVICE_VALUE` (`${LLLM_TEST_SERVICE_VALUE}`), which is not set (or empty)");
    expect(run.stderr).toContain("${LLLM_TEST_SERVICE_VALUE:-value}");
  });
});

/**
 * Values written in the tactic itself are meant for the server alone, whatever their names: a server that echoes
 * one (a result, its stderr quoted in an error) must not bring it to the model, the log or stderr. Short values,
 * settings made of lower-case words and file paths are no credentials and stay readable.
 */
describe("a stdio MCP server's literal env values", () => {
  const LITERALS = { API_TOKEN: "sk-literal-0a1b2c3d4e5f", ACME_LICENCE: "Lic-77-Zq8-PLUM" };

  it("are redacted in what the model, the log and stderr see (but not `production` or a path)", async () => {
    const dir = tempDir("lllm-mcp-env-");
    const tactic = path.join(dir, "tactic.yaml");
    const env = { ...LITERALS, NODE_ENV: "production", DATA_DIR: "/srv/data/projects", DEBUG: "1" };
    writeFileSync(
      tactic,
      `global: {model_name: gpt-test}\nagent_configs:\n  - name: worker\n    system_prompt: hi\n    mcp_servers:\n      - ${JSON.stringify({ name: "fx", command: process.execPath, args: [FIXTURE], env, allowed_tools: ["env"] })}\n`,
    );
    const turns = path.join(dir, "turns.yaml");
    writeFileSync(turns, `- tool_calls:\n${Object.keys(env).map((name) => `    - {name: env, arguments: {name: ${name}}}\n`).join("")}- text: checked\n`);
    const home = tempDir("lllm-home-");
    const run = await runCli(["run", tactic, "--model", `scripted:${turns}`, "--input", "go", "--json"], { env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(0);
    const results = (JSON.parse(run.stdout) as { tool_calls: Array<{ result: unknown }> }).tool_calls.map((call) => call.result);
    expect(results).toEqual(["[redacted]", "[redacted]", "production", "/srv/data/projects", "1"]);
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.code, shown.stderr).toBe(0);
    for (const value of Object.values(LITERALS)) expect(shown.stdout + run.stdout + run.stderr).not.toContain(value);
  });

  it("are redacted in the server's stderr quoted by a start failure", async () => {
    const run = await runCli(["mcp", "tools", "--env", `ACME_LICENCE=${LITERALS.ACME_LICENCE}`, "--", process.execPath, "-e", 'console.error("licence " + process.env.ACME_LICENCE + " refused"); process.exit(1)']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain("licence [redacted] refused");
    expect(run.stderr).not.toContain(LITERALS.ACME_LICENCE);
  });
});
