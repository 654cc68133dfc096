import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { assertProviderMcpSupported, MCP } from "../../src/mcp/index.js";

describe("MCP (provider-side declaration, seed 000 Step 9)", () => {
  it("passes the declaration along as an mcp tool", () => {
    const docs = new MCP({ server_label: "docs", server_url: "https://example.com/mcp", require_approval: "never", allowed_tools: ["search", "fetch_url"] });
    expect(docs.toTool()).toEqual({ type: "mcp", server_label: "docs", server_url: "https://example.com/mcp", require_approval: "never", allowed_tools: ["search", "fetch_url"] });
    expect(Object.keys(docs.toTool())).toEqual(["type", "server_label", "server_url", "require_approval", "allowed_tools"]);
  });

  it("defaults require_approval to never and leaves allowed_tools out when not given, as LLLM does", () => {
    expect(new MCP({ server_label: "docs", server_url: "https://example.com/mcp" }).toTool()).toEqual({ type: "mcp", server_label: "docs", server_url: "https://example.com/mcp", require_approval: "never" });
  });

  it("accepts always and a per-tool filter", () => {
    expect(new MCP({ server_label: "d", server_url: "https://x.test/mcp", require_approval: "always" }).toTool().require_approval).toBe("always");
    const filter = { never: { tool_names: ["search"] }, always: { tool_names: ["delete"] } };
    expect(new MCP({ server_label: "d", server_url: "https://x.test/mcp", require_approval: filter }).toTool().require_approval).toEqual(filter);
  });

  it("rejects what the provider would reject, saying what is allowed", () => {
    expect(() => new MCP({ server_label: "docs", server_url: "https://x.test/mcp", require_approval: "sometimes" as never })).toThrow(/^MCP declaration `docs`: `require_approval` must be "never", "always" or \{always/);
    expect(() => new MCP({ server_label: "docs", server_url: "ftp://x" })).toThrow(ConfigError);
    expect(() => new MCP({ server_label: "", server_url: "https://x.test/mcp" })).toThrow(/needs a `server_label`/);
    expect(() => new MCP({ server_label: "docs", server_url: "https://x.test/mcp", allowed_tools: "search" as never })).toThrow(/allowed_tools/);
  });
});

describe("assertProviderMcpSupported", () => {
  it("allows the Responses API", () => {
    expect(() => assertProviderMcpSupported("response")).not.toThrow();
  });

  it("refuses chat completions, saying to set api_type: response", () => {
    for (const apiType of ["completion", undefined]) {
      let error: unknown;
      try {
        assertProviderMcpSupported(apiType, { agent: "docs_bot", serverLabels: ["docs"] });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: "mcp_needs_responses_api", exitCode: 2, message: "provider-side MCP servers (`docs`) need the Responses API, but agent `docs_bot` uses api_type completion" });
      expect((error as ConfigError).hint).toContain("api_type: response");
    }
  });
});
