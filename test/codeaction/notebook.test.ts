import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { notebookParser } from "../../src/tactics/notebookParser.js";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { emptyHome, ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// Each case spawns the CLI, which runs a kernel: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const NO_CELLS = "No cells found. Wrap code in <python_cell>...</python_cell>, or reply with <TERMINATE_NOTEBOOK> when you are done.";

describe("notebookParser (Step 16)", () => {
  const parse = (text: string): unknown => notebookParser(text, { agent: "a", prompt: undefined as never });
  it("reads the cells in order; the end tag ends only a reply without code", () => {
    expect(parse("<markdown_cell> # Plan </markdown_cell>\n<python_cell>\nx = 1\n</python_cell>")).toEqual({ cells: [{ kind: "markdown_cell", source: "# Plan" }, { kind: "python_cell", source: "x = 1" }], terminate: false });
    expect(parse("<markdown_cell>Done.</markdown_cell><TERMINATE_NOTEBOOK>")).toEqual({ cells: [{ kind: "markdown_cell", source: "Done." }], terminate: true });
    expect(parse("<python_cell>x</python_cell><TERMINATE_NOTEBOOK>")).toMatchObject({ terminate: false });
    expect(parse("<TERMINATE_NOTEBOOK>")).toEqual({ cells: [], terminate: true });
  });
  it("a reply without cells is Step 16's ParseError", () => {
    expect(() => parse("Let me think.")).toThrow(NO_CELLS);
  });
});

describe("lllm run: notebook", () => {
  it("runs cells in one kernel with CALL_API, sends the outputs back, and writes a real .ipynb", async () => {
    server = await startMockOpenAIServer({
      script: [
        "I will look at the data.",
        '<markdown_cell>Fetch Tokyo.</markdown_cell>\n<python_cell>\ntokyo = CALL_API("weather/current/Tokyo", {})\nprint(tokyo["temperature"])\n</python_cell>',
        "<python_cell>\nprint(tokyo['condition'], 1 / 0)\n</python_cell>",
        "<markdown_cell>Tokyo is 18 degrees and cloudy.</markdown_cell>\n<TERMINATE_NOTEBOOK>",
      ],
    });
    const out = path.join(tempDir("lllm-nb-"), "run.ipynb");
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/notebook.yaml"), "--input", "How is Tokyo?", "--notebook-out", out], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      "<markdown_cell>\nFetch Tokyo.\n</markdown_cell>\n\n<python_cell>\ntokyo = CALL_API(\"weather/current/Tokyo\", {})\nprint(tokyo[\"temperature\"])\n</python_cell>\n\n<python_cell>\nprint(tokyo['condition'], 1 / 0)\n</python_cell>\n\n<markdown_cell>\nTokyo is 18 degrees and cloudy.\n</markdown_cell>\n",
    );
    const posts = server.requests.filter((request) => request.method === "POST").map((request) => request.body.messages as Array<{ role: string; content: string }>);
    expect(posts).toHaveLength(4);
    const system = posts[0]![0]!.content;
    expect(system).toContain("You are a data analyst.");
    expect(system).toContain("Write code in <python_cell>...</python_cell> tags");
    expect(system).toContain("CALL_API(path, params)");
    expect(system.split("## Weather API (weather)")).toHaveLength(2); // the API directory, once
    expect(posts[1]!.at(-1)!.content).toBe(`Error: ${NO_CELLS} Please fix.`);
    expect(posts[2]!.at(-1)!.content).toBe("Cell outputs:\n\n18\n");
    expect(posts[3]!.at(-1)!.content).toMatch(/^Cell outputs:\n\nTraceback \(most recent call last\):\n[\s\S]*ZeroDivisionError: division by zero\n$/);

    const notebook = JSON.parse(readFileSync(out, "utf8")) as { nbformat: number; nbformat_minor: number; metadata: { kernelspec: { name: string } }; cells: Array<Record<string, unknown>> };
    expect(notebook.nbformat).toBe(4);
    expect(notebook.nbformat_minor).toBeGreaterThanOrEqual(4);
    expect(notebook.metadata.kernelspec.name).toBe("python3");
    expect(notebook.cells.map((cell) => cell.cell_type)).toEqual(["markdown", "code", "code", "markdown"]);
    for (const cell of notebook.cells) {
      expect(typeof cell.id).toBe("string");
      expect(cell.metadata).toEqual({});
      expect(Array.isArray(cell.source)).toBe(true);
    }
    expect(notebook.cells[1]).toMatchObject({ execution_count: 1, source: ['tokyo = CALL_API("weather/current/Tokyo", {})\n', 'print(tokyo["temperature"])'], outputs: [{ output_type: "stream", name: "stdout", text: ["18\n"] }] });
    expect(notebook.cells[2]).toMatchObject({ execution_count: 2, outputs: [{ output_type: "error", ename: "ZeroDivisionError", evalue: "division by zero" }] });
    expect((notebook.cells[2]!.outputs as Array<{ traceback: string[] }>)[0]!.traceback.at(-1)).toBe("ZeroDivisionError: division by zero");
  });

  const SEED_SYSTEM = "You are a data analyst working in a Python notebook.\n\n- Write code in <python_cell>...</python_cell> tags and notes in <markdown_cell>...</markdown_cell> tags.\n- Cells run in order and variables persist between turns. Use print() to see values.\n- Call the data APIs listed below with CALL_API(path, params).\n- When you are done, write a final <markdown_cell> summary followed by <TERMINATE_NOTEBOOK>.";

  it("fills Step 16's {api_directory} with an empty directory when the agent has no proxy", async () => {
    server = await startMockOpenAIServer({ script: ["<python_cell>\nprint(6 * 7)\n</python_cell>", "<markdown_cell>42.</markdown_cell>\n<TERMINATE_NOTEBOOK>"] });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/codeaction/notebook-directory.yaml"), "--input", "Six times seven?"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("<python_cell>\nprint(6 * 7)\n</python_cell>\n\n<markdown_cell>\n42.\n</markdown_cell>\n");
    const posts = server.requests.filter((request) => request.method === "POST").map((request) => request.body.messages as Array<{ role: string; content: string }>);
    // The user's template is the whole prompt: the built-in instructions are not appended a second time.
    expect(posts[0]![0]!.content.trim()).toBe(SEED_SYSTEM);
    expect(posts[1]!.at(-1)!.content).toBe("Cell outputs:\n\n42\n");
  });

  it("with a proxy block and Step 16's {api_directory}, the API directory appears once in the system prompt", async () => {
    const dir = tempDir("lllm-nb-once-");
    const file = path.join(dir, "tactic.yaml");
    const source = readFileSync(path.join(ROOT, "test/fixtures/codeaction/notebook-directory.yaml"), "utf8")
      .replace("notebook: {max_steps: 3}", `notebook: {max_steps: 3}\npackages: [${JSON.stringify(path.join(ROOT, "packages-example/weather"))}]`)
      .replace("  - name: analyst\n", "  - name: analyst\n    proxy: {activate_proxies: [weather], use_cache: false}\n");
    writeFileSync(file, source);
    try {
      server = await startMockOpenAIServer({ script: ["<markdown_cell>Nothing to do.</markdown_cell>\n<TERMINATE_NOTEBOOK>"] });
      const result = await runCli(["run", file, "--input", "Hello"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
      expect(result.stderr).toBe("");
      expect(result.code, result.stderr).toBe(0);
      const system = (server.requests.find((request) => request.method === "POST")!.body.messages as Array<{ content: string }>)[0]!.content;
      expect(system.startsWith(SEED_SYSTEM)).toBe(true);
      expect(system.split("## Weather API (weather)")).toHaveLength(2);
      expect(system.split("- **current/{city}** [GET]")).toHaveLength(2);
      expect(system).toContain("query_api_doc(proxy_name)"); // the proxy block's instructions are still there
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fills {api_directory} with every endpoint of the agent's proxies", async () => {
    const dir = tempDir("lllm-nb-dir-");
    const file = path.join(dir, "tactic.yaml");
    const source = readFileSync(path.join(ROOT, "test/fixtures/codeaction/notebook-directory.yaml"), "utf8")
      .replace("notebook: {max_steps: 3}", `notebook: {max_steps: 3}\npackages: [${JSON.stringify(path.join(ROOT, "packages-example/weather"))}]`)
      .replace("  - name: analyst\n", "  - name: analyst\n    proxy: {activate_proxies: [weather], use_cache: false, prompt_template: ''}\n");
    writeFileSync(file, source);
    try {
      server = await startMockOpenAIServer({ script: ["<markdown_cell>Nothing to do.</markdown_cell>\n<TERMINATE_NOTEBOOK>"] });
      const result = await runCli(["run", file, "--input", "Hello"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome() } });
      expect(result.stderr).toBe("");
      expect(result.code, result.stderr).toBe(0);
      const system = (server.requests.find((request) => request.method === "POST")!.body.messages as Array<{ content: string }>)[0]!.content;
      expect(system.startsWith(SEED_SYSTEM)).toBe(true);
      expect(system).toContain("## Weather API (weather)");
      expect(system).toContain("**current/{city}** [GET]");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
