import { describe, expect, it } from "vitest";
import { decodeToolResult, McpToolError } from "../../src/mcp/index.js";

const where = { server: "shop", tool: "orders" };
const text = (value: string) => ({ type: "text", text: value });

function failure(result: Parameters<typeof decodeToolResult>[0]): McpToolError {
  try {
    decodeToolResult(result, where);
  } catch (error) {
    if (error instanceof McpToolError) return error;
    throw error;
  }
  throw new Error("expected an McpToolError");
}

describe("decodeToolResult", () => {
  it("decodes JSON text and keeps other text", () => {
    expect(decodeToolResult({ content: [text('{"a": [1, 2.5]}')] }, where)).toEqual({ value: { a: [1, 2.5] }, text: '{"a": [1, 2.5]}', files: [] });
    expect(decodeToolResult({ content: [text("3.5")] }, where).value).toBe(3.5);
    expect(decodeToolResult({ content: [text("null")] }, where).value).toBeNull();
    expect(decodeToolResult({ content: [text("plain words")] }, where).value).toBe("plain words");
    expect(decodeToolResult({ content: [text("line 1"), text("line 2")] }, where).value).toBe("line 1\nline 2");
    expect(decodeToolResult({ content: [] }, where).value).toBe("");
  });

  it("prefers structuredContent, keeping the text for the model", () => {
    expect(decodeToolResult({ content: [text("It is 20 degrees")], structuredContent: { temperature: 20 } }, where)).toEqual({ value: { temperature: 20 }, text: "It is 20 degrees", files: [] });
  });

  it("describes non-text content in a line instead of base64, and keeps the blocks as files for programs", () => {
    const image = { type: "image", data: "AAAA", mimeType: "image/png" };
    const link = { type: "resource_link", uri: "file:///a.csv", name: "a.csv" };
    const decoded = decodeToolResult({ content: [text("chart:"), image, link, { type: "hologram" }, { type: "audio", data: 7 }] }, where);
    expect(decoded.value).toBe("chart:\n[image image/png, 3 bytes]\n[resource link file:///a.csv (a.csv)]\n[hologram content]\n[audio , 0 bytes]");
    expect(decoded.files).toEqual([image, link]); // blocks lllm cannot read are left out
  });

  it("raises error results with the server's code and message", () => {
    expect(failure({ content: [text("disk on fire")], isError: true })).toMatchObject({ message: "disk on fire", mcpCode: "TOOL_ERROR", mcpMessage: "disk on fire", server: "shop", tool: "orders" });
    expect(failure({ content: [text("MCP error -32602: Tool nope not found")], isError: true })).toMatchObject({ message: "MCP error -32602: Tool nope not found", mcpCode: "INVALID_PARAMS", mcpMessage: "Tool nope not found" });
    expect(failure({ content: [text('{"error": {"code": "NOT_FOUND", "message": "no order 7"}}')], isError: true })).toMatchObject({ message: "NOT_FOUND: no order 7", mcpCode: "NOT_FOUND" });
    expect(failure({ content: [text("Error: Division by zero")], isError: true })).toMatchObject({ message: "Division by zero" });
    expect(failure({ content: [], isError: true }).message).toBe("tool `orders` of MCP server `shop` failed without a message");
  });

  it("raises an error envelope sent as a success", () => {
    expect(failure({ content: [text('{"error": {"code": 404, "message": "gone"}}')] })).toMatchObject({ mcpCode: "404", mcpMessage: "gone" });
    // Data that merely has an `error` field is data.
    expect(decodeToolResult({ content: [text('{"error": null, "rows": []}')] }, where).value).toEqual({ error: null, rows: [] });
  });
});
