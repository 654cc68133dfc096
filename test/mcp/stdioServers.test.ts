import { spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { McpConnections, McpToolError } from "../../src/mcp/index.js";
import { FunctionCall, type FunctionTool } from "../../src/tools/index.js";
import { EVERYTHING, FILESYSTEM, FIXTURE, isAlive, JITI, nodeServer } from "./helpers.js";
import { tempDir } from "../helpers/tempTree.js";

function byName(tools: FunctionTool[], name: string): FunctionTool {
  const found = tools.find((tool) => tool.name === name);
  if (!found) throw new Error(`no tool ${name} among ${tools.map((tool) => tool.name).join(", ")}`);
  return found;
}

async function call(tool: FunctionTool, args: Record<string, unknown> = {}): Promise<FunctionCall> {
  return tool.call(new FunctionCall({ name: tool.name, arguments: args }));
}

describe("server-everything over stdio", () => {
  const connections = new McpConnections();
  const config = nodeServer("everything", EVERYTHING, { env: { LLLM_TEST_GIVEN: "given-value" } });
  let tools: FunctionTool[];

  beforeAll(async () => {
    vi.stubEnv("LLLM_TEST_SECRET", "host-secret");
    tools = await connections.get(config);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await connections.closeAll();
  });

  it("lists the server's tools with their schemas", () => {
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-env", "get-structured-content"]));
    const echo = byName(tools, "echo");
    expect(echo.toTool()).toEqual({
      type: "function",
      function: {
        name: "echo",
        description: "Echoes back the input string",
        parameters: { type: "object", properties: { message: { type: "string", description: "Message to echo" } }, required: ["message"], additionalProperties: false },
        strict: true,
      },
    });
    // No `required` in an MCP schema means nothing is required; defaults are noted as lllm notes them.
    const longRunning = byName(tools, "trigger-long-running-operation");
    expect(longRunning.required).toEqual([]);
    expect(longRunning.properties.duration).toEqual({ type: "number", description: "Duration of the operation in seconds (default: 10)" });
  });

  it("calls echo and returns its text", async () => {
    const result = await call(byName(tools, "echo"), { message: "hi there" });
    expect(result.error).toBeUndefined();
    expect(result.result).toBe("Echo: hi there");
    expect(result.resultStr).toBe("Return of calling function echo with arguments {'message': 'hi there'}:\n---\nEcho: hi there\n---");
  });

  it("decodes a JSON text result, and gives the server only the safe environment plus the config's env", async () => {
    const result = await call(byName(tools, "get-env"));
    expect(result.error).toBeUndefined();
    const env = result.result as Record<string, string>;
    expect(typeof env).toBe("object");
    expect(env.LLLM_TEST_GIVEN).toBe("given-value");
    expect(env.PATH).toBe(process.env.PATH);
    expect(env).not.toHaveProperty("LLLM_TEST_SECRET");
    // The model reads the server's own text (pretty-printed JSON here), not a re-serialisation of the data.
    expect(result.resultStr).toBe(`Return of calling function get-env with arguments {}:\n---\n${JSON.stringify(env, null, 2)}\n---`);
  });

  it("prefers structuredContent", async () => {
    const result = await call(byName(tools, "get-structured-content"), { location: "Chicago" });
    expect(result.result).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
  });

  it("validates arguments before calling the server", async () => {
    const result = await call(byName(tools, "get-sum"), { a: 1 });
    expect(result.resultStr).toBe("Error: Invalid arguments for get-sum: missing required argument 'b' (number)");
  });

  it("starts the server once per run", async () => {
    const again = await connections.get(config);
    expect(connections.connections).toHaveLength(1);
    expect((await call(byName(again, "get-sum"), { a: 2, b: 3 })).result).toBe("The sum of 2 and 3 is 5.");
  });

  it("offers only allowed_tools, in their order, under a prefix; the server gets the real name", async () => {
    const allowed = await connections.get({ ...config, allowed_tools: ["get-sum", "echo"], prefix: "ev_" });
    expect(allowed.map((tool) => tool.name)).toEqual(["ev_get-sum", "ev_echo"]);
    expect(connections.connections).toHaveLength(1);
    const result = await call(allowed[1]!, { message: "prefixed" });
    expect(result.result).toBe("Echo: prefixed");
    expect(result.resultStr).toContain("Return of calling function ev_echo with arguments {'message': 'prefixed'}");
  });

  it("rejects an allowed tool the server does not have, naming it and listing the server's tools", async () => {
    const error = await connections.get({ ...config, allowed_tools: ["echo", "ecoh", "nope"] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("mcp_tool_not_found");
    expect((error as ConfigError).message).toMatch(/^MCP server `everything` has no tool `ecoh`, `nope` \(listed in allowed_tools\); its tools are: echo, .*get-sum/);
    expect((error as ConfigError).hint).toContain("`ecoh` -> `echo`");
  });

  it("times a slow call out with an error naming the server and the tool", async () => {
    const quick = new McpConnections({ callTimeoutMs: 300 });
    try {
      const [slow] = await quick.get({ ...config, allowed_tools: ["trigger-long-running-operation"] });
      const result = await call(slow!, { duration: 5, steps: 1 });
      expect(result.resultStr).toBe("Error: MCP server `everything`: tool `trigger-long-running-operation` did not answer within 0.3 s");
    } finally {
      await quick.closeAll();
    }
  });
});

describe("the fixture server over stdio", () => {
  const connections = new McpConnections();
  let tools: FunctionTool[];
  beforeAll(async () => {
    tools = await connections.get(nodeServer("shop", FIXTURE));
  });
  afterAll(() => connections.closeAll());

  it("decodes JSON text (lists, numbers); other text stays a string", async () => {
    const orders = await call(byName(tools, "list_orders"), { month: "2026-09" });
    expect(orders.result).toEqual([{ id: 1, month: "2026-09", total: 9.5 }, { id: 2, month: "2026-09", total: 20 }]);
    expect(orders.resultStr).toBe(`Return of calling function list_orders with arguments {'month': '2026-09'}:\n---\n[{"id":1,"month":"2026-09","total":9.5},{"id":2,"month":"2026-09","total":20}]\n---`);
    expect((await call(byName(tools, "count"))).result).toBe(42);
    expect((await call(byName(tools, "greet"))).result).toBe("Hello, you!");
  });

  it("turns an error result into an McpToolError with the server's text", async () => {
    const tool = byName(tools, "fail");
    const result = await call(tool);
    expect(result.resultStr).toBe("Error: disk on fire");
    const error = await Promise.resolve().then(() => tool.run!({}, {})).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpToolError);
    expect(error).toMatchObject({ server: "shop", tool: "fail", mcpCode: "TOOL_ERROR", mcpMessage: "disk on fire", code: "mcp_tool_error" });
  });

  it("turns an error envelope into an McpToolError with its code", async () => {
    const tool = byName(tools, "find_order");
    expect((await call(tool, { id: 7 })).resultStr).toBe("Error: NOT_FOUND: no order 7");
    const error = await Promise.resolve().then(() => tool.run!({ id: 7 }, {})).then(() => undefined, (caught: unknown) => caught);
    expect(error).toMatchObject({ mcpCode: "NOT_FOUND", mcpMessage: "no order 7" });
  });

  it("offers a dotted tool name in a form providers accept, and calls it by its real name", async () => {
    const tool = byName(tools, "files_read");
    expect((await call(tool)).result).toBe("read");
  });

  it("shows the first description line and the whole description", () => {
    expect(byName(tools, "list_orders").description).toBe("List the orders of a month\nSecond line of the description.");
  });
});

describe("server-filesystem over stdio", () => {
  let dir: string;
  const connections = new McpConnections();
  beforeAll(() => {
    dir = realpathSync(tempDir("lllm-mcp-fs-"));
    writeFileSync(path.join(dir, "notes.txt"), "first line\nsecond line\n");
  });
  afterAll(async () => {
    await connections.closeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads a file in the allowed folder, and makes an error of a path outside it", async () => {
    const tools = await connections.get(nodeServer("files", FILESYSTEM, { allowed_tools: ["read_text_file", "list_directory"] }, [dir]));
    expect(tools.map((tool) => tool.name)).toEqual(["read_text_file", "list_directory"]);
    const read = await call(tools[0]!, { path: path.join(dir, "notes.txt") });
    expect(read.error).toBeUndefined();
    // The data is the structuredContent; the model reads the file's text itself.
    expect(read.result).toEqual({ content: "first line\nsecond line\n" });
    expect(read.resultStr).toBe(`Return of calling function read_text_file with arguments {'path': '${path.join(dir, "notes.txt")}'}:\n---\nfirst line\nsecond line\n\n---`);
    const outside = await call(tools[0]!, { path: "/etc/hostname" });
    expect(outside.error).toMatch(/Access denied|outside allowed directories/i);
    expect(outside.resultStr).toBe(`Error: ${outside.error}`);
  });
});

// The orphan cases start a runner through jiti, which compiles lllm's sources first: seconds on a busy machine.
describe("closing", { timeout: 120_000 }, () => {
  it("leaves no server process behind after closeAll", async () => {
    const connections = new McpConnections();
    await connections.get(nodeServer("everything", EVERYTHING));
    // A server that ignores the end of its stdin: closeAll must signal it.
    await connections.get(nodeServer("stubborn", FIXTURE, {}, ["--stubborn"]));
    const pids = connections.connections.map((connection) => connection.pid!);
    expect(pids.every((pid) => typeof pid === "number" && isAlive(pid))).toBe(true);
    await connections.closeAll();
    expect(pids.map(isAlive)).toEqual([false, false]);
    expect(connections.connections).toHaveLength(0);
  });

  it("closeAll stops a server that ignores SIGTERM, and the child that holds its stdio", async () => {
    const dir = tempDir("lllm-mcp-close-");
    const connections = new McpConnections();
    try {
      const pidsFile = path.join(dir, "pids");
      await connections.get(nodeServer("stubborn", FIXTURE, {}, ["--stubborn", "--ignore-sigterm", "--spawn-child", "--pids", pidsFile]));
      await expect.poll(() => existsSync(pidsFile) && readFileSync(pidsFile, "utf8").includes(" "), { timeout: 5000 }).toBe(true);
      const pids = readFileSync(pidsFile, "utf8").split(" ").map(Number);
      expect(pids.map(isAlive)).toEqual([true, true]);
      await connections.closeAll();
      await expect.poll(() => pids.map(isAlive), { timeout: 5000 }).toEqual([false, false]);
    } finally {
      await connections.closeAll();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports a server that exits during a call, with its stderr", async () => {
    const connections = new McpConnections();
    try {
      const tools = await connections.get(nodeServer("shop", FIXTURE));
      const result = await call(byName(tools, "crash"));
      expect(result.error).toMatch(/^MCP server `shop` closed the connection during a call to `crash`/);
      expect(result.error).toContain("fatal: the crash tool was called");
      expect(isAlive(connections.connections[0]!.pid!)).toBe(false);
    } finally {
      await connections.closeAll();
    }
  });

  it.each(["exit", "throw", "signal"])("kills the servers of a process that ends without closeAll (%s)", async (mode) => {
    const dir = tempDir("lllm-mcp-orphan-");
    const pidsFile = path.join(dir, "pids");
    const child = spawn(process.execPath, [JITI, new URL("./fixtures/orphanRunner.ts", import.meta.url).pathname, mode, pidsFile], { stdio: ["pipe", "pipe", "pipe"] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once("exit", () => reject(new Error("the runner exited before printing the server's pid")));
    });
    expect(isAlive(pid)).toBe(true);
    await expect.poll(() => existsSync(pidsFile) && readFileSync(pidsFile, "utf8").includes(" "), { timeout: 5000 }).toBe(true);
    const grandchild = Number(readFileSync(pidsFile, "utf8").split(" ")[1]);
    rmSync(dir, { recursive: true, force: true });
    if (mode === "signal") child.kill("SIGTERM");
    else child.stdin.write("go\n");
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal])));
    if (mode === "signal") expect(signal).toBe("SIGTERM"); // the default behaviour of the signal is kept
    else expect(code).toBe(mode === "exit" ? 0 : 1);
    try {
      await expect.poll(() => isAlive(pid) || isAlive(grandchild), { timeout: 3000 }).toBe(false);
    } finally {
      for (const each of [pid, grandchild]) if (isAlive(each)) process.kill(each, "SIGKILL"); // a failing test must not leave them behind either
    }
  });
});

