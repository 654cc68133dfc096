import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { FIXTURE } from "./helpers.js";

vi.setConfig({ testTimeout: 120_000 });

/** `${NAME}` in a stdio server's `env`, through `lllm run` as a user writes it: read from lllm's environment, strictly. */

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
      '          LITERAL: "$${NOT_EXPANDED}"',
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
    expect(run.code).toBe(0);
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    // The server saw the secret (its answer held it); the log shows it redacted, as a credential's value.
    expect(shown.stdout).toMatch(/^ +\[redacted\]$/m);
    expect(shown.stdout).not.toContain(SECRET);
    expect(shown.stdout).toMatch(/^ +hello world$/m);
    expect(shown.stdout).toMatch(/^ +\$\{NOT_EXPANDED\}$/m);
  });

  it("an unset variable without a default is a config error naming the file, the line and the variable", async () => {
    const { tactic, turns, home } = project();
    const run = await runCli(["run", tactic, "--model", `scripted:${turns}`, "--input", "go"], { env: { LLLM_HOME: home } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${tactic}:12:`);
    expect(run.stderr).toContain("MCP server `fx`: env `SERVICE_TOKEN` names the variable `LLLM_TEST_SERVICE_VALUE` (`${LLLM_TEST_SERVICE_VALUE}`), which is not set (or empty)");
    expect(run.stderr).toContain("${LLLM_TEST_SERVICE_VALUE:-value}");
  });
});
