import { rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findPython } from "../../src/sandbox/findPython.js";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { emptyHome, ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// A machine with neither bubblewrap nor gVisor: the CLI runs with a PATH that holds only python3.
let server: MockOpenAIServer | undefined;
let bin = "";
beforeAll(async () => {
  bin = tempDir("lllm-nosandbox-bin-");
  symlinkSync((await findPython()).executable, path.join(bin, "python3"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

describe("tool_chain without a working sandbox (seed 001)", () => {
  it("is left out with one warning on stderr, and the run goes on", async () => {
    server = await startMockOpenAIServer({ script: ["Nobody in Sales."] });
    const home = emptyHome();
    try {
      const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/chain-two-agents.yaml"), "--input", "Sales payroll?"], { env: { PATH: bin, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("Nobody in Sales.\n");
      const warnings = result.stderr.split("\n").filter((line) => line.includes("tool_chain"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/tool_chain is left out: the tool_chain of agent `analyst` runs model-written code only in a sandbox, and none works here/);
      const tools = (server.requests.find((request) => request.method === "POST")!.body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
      expect(tools).toContain("get_employee");
      expect(tools).not.toContain("tool_chain");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
