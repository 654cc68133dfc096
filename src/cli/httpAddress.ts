import { ConfigError } from "../errors.js";

// What `lllm serve` shares with `lllm mcp serve --http`, in a file of its own: importing them from cli/mcp.ts made
// every `lllm serve` load the MCP command's module and with it the MCP SDK's client and its zod (~470 files).

/** `--http [HOST:]PORT`: `3000`, `127.0.0.1:3000`, `[::1]:3000`, `0.0.0.0:8080`. */
export function parseHttpAddress(text: string, code: "usage_mcp_http" | "usage_serve" = "usage_mcp_http"): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:\s]+):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) {
    throw new ConfigError(code, `--http ${JSON.stringify(text)} is not [HOST:]PORT`, { hint: "For example --http 3000, --http 127.0.0.1:3000 or --http 0 (any free port)." });
  }
  return { host: match[1] ?? "127.0.0.1", port };
}

/** The line that shows a token made for this session (`lllm serve`, `lllm mcp serve --http`). */
export function madeTokenLine(token: string): string {
  return `lllm: clients must send the header \`Authorization: Bearer ${token}\` (a token made for this session: do not share it; --token-env NAME to choose one)`;
}
