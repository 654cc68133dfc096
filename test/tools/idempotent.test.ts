import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import type { McpConnection, McpToolInfo } from "../../src/mcp/McpConnection.js";
import { mcpToolToFunction } from "../../src/mcp/mcpToolToFunction.js";
import { checkServerConfig } from "../../src/mcp/checkServerConfig.js";
import { functionFromDeclaration } from "../../src/tools/functionFromDeclaration.js";
import { declaration, FunctionTool, isIdempotent, tool } from "../../src/tools/index.js";

// Which tools a resumed run may call again when its stop cut a call short (its outcome never recorded): those that
// say so (`idempotent: true`), and by default those that declare they change nothing; never by default a command
// tool or an MCP tool, whatever hints the server gives.

const file = "/pkg/tools/t.yaml";
const baseDir = "/pkg/tools";
const command = (extra: Record<string, unknown>): FunctionTool => functionFromDeclaration({ name: "cmd", description: "A command tool", command: ["true"], ...extra }, { file, baseDir });

describe("idempotent tools", () => {
  it("a command tool is not, unless it says so or declares it changes nothing", () => {
    expect(isIdempotent(command({}))).toBe(false);
    expect(isIdempotent(command({ idempotent: true }))).toBe(true);
    expect(isIdempotent(command({ side_effects: false }))).toBe(true);
    expect(isIdempotent(command({ annotations: { readOnlyHint: true } }))).toBe(true);
    // Its own word wins over what it declares otherwise.
    expect(isIdempotent(command({ side_effects: false, idempotent: false }))).toBe(false);
    expect(isIdempotent(command({ side_effects: true }))).toBe(false);
  });

  it("a tool in code is not, unless it says so", () => {
    const run = (): string => "ok";
    expect(isIdempotent(tool({ name: "a", description: "A", run }))).toBe(false);
    expect(isIdempotent(tool({ name: "a", description: "A", run, idempotent: true }))).toBe(true);
    expect(isIdempotent(tool({ name: "a", description: "A", run, sideEffects: false }))).toBe(true);
    expect(() => tool({ name: "a", description: "A", run, idempotent: "yes" as unknown as boolean })).toThrow("`idempotent` must be true or false");
  });

  it("a declaration's word holds for the implementation it is bound to, else the implementation's", () => {
    const run = (): string => "ok";
    expect(isIdempotent(declaration({ name: "a", description: "A" }).bind(tool({ name: "a", description: "A", run, idempotent: true })))).toBe(true);
    expect(isIdempotent(new FunctionTool({ name: "a", description: "A", idempotent: false }).bind(tool({ name: "a", description: "A", run, idempotent: true })))).toBe(false);
  });

  it("a wrong `idempotent` in a declaration is an error naming the file", () => {
    let error: unknown;
    try {
      command({ idempotent: "yes" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("/pkg/tools/t.yaml: tool `cmd`: `idempotent` must be true or false, got \"yes\"");
  });

  it("an MCP tool is not, whatever the server's hints, unless the tactic lists it in the server's idempotent_tools", () => {
    const connection = { name: "shop", callTool: async () => ({ value: null, text: "", files: [] }) } as unknown as McpConnection;
    const info = (name: string): McpToolInfo => ({ name, inputSchema: { type: "object" }, annotations: { readOnlyHint: true, idempotentHint: true } }) as McpToolInfo;
    expect(isIdempotent(mcpToolToFunction(connection, info("list"), { callTimeoutMs: 1000 }))).toBe(false);
    expect(isIdempotent(mcpToolToFunction(connection, info("list"), { callTimeoutMs: 1000, idempotent: true }))).toBe(true);
    expect(() => checkServerConfig({ name: "shop", command: "node", idempotent_tools: "list" as unknown as string[] })).toThrow("`idempotent_tools` must be a list of strings");
  });
});
