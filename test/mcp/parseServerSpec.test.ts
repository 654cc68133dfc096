import { describe, expect, it } from "vitest";
import { parseServerSpec, splitCommandLine } from "../../src/mcp/index.js";

describe("splitCommandLine", () => {
  it("splits like a shell, without expanding anything", () => {
    expect(splitCommandLine("node server.js --flag")).toEqual(["node", "server.js", "--flag"]);
    expect(splitCommandLine(`  python3 -m "my server" 'a b' c\\ d "q\\"uote" '$HOME' ""  `)).toEqual(["python3", "-m", "my server", "a b", "c d", 'q"uote', "$HOME", ""]);
  });

  it("rejects an unterminated quote", () => {
    expect(() => splitCommandLine(`node "server.js`)).toThrow("unterminated double quote in `node \"server.js`");
  });
});

describe("parseServerSpec", () => {
  it("reads a URL as an HTTP server, with headers", () => {
    expect(parseServerSpec("http://127.0.0.1:3000/mcp", { header: ["Authorization: Bearer abc", "X-Team=ml"] })).toEqual({
      name: "127.0.0.1",
      url: "http://127.0.0.1:3000/mcp",
      headers: { Authorization: "Bearer abc", "X-Team": "ml" },
    });
  });

  it("reads a command line, or words already split, as a stdio server with env", () => {
    expect(parseServerSpec("node ./dist/server.js --root '/my data'", { env: ["API_KEY=a=b"] })).toEqual({ name: "server", command: "node", args: ["./dist/server.js", "--root", "/my data"], env: { API_KEY: "a=b" } });
    expect(parseServerSpec(["uvx", "mcp-server-fetch", "--ignore robots"])).toEqual({ name: "mcp-server-fetch", command: "uvx", args: ["mcp-server-fetch", "--ignore robots"] });
    expect(parseServerSpec("npx -y @modelcontextprotocol/server-filesystem /tmp").name).toBe("server-filesystem");
    expect(parseServerSpec("/usr/local/bin/weather-mcp --port 0").name).toBe("weather-mcp");
    // Inline code and a flag's value never name the server: its program or script does.
    expect(parseServerSpec("node -e 'setTimeout(()=>{},1000000)'").name).toBe("node");
    expect(parseServerSpec("python3 -c 'import server'").name).toBe("python3");
    expect(parseServerSpec("node --require ./preload.cjs dist/server.mjs").name).toBe("server");
    expect(parseServerSpec("python -m mcp_server_git").name).toBe("mcp_server_git");
    expect(parseServerSpec("lllm mcp serve packages-example/weather").name).toBe("lllm");
  });

  it("says what is wrong with a spec", () => {
    expect(() => parseServerSpec("")).toThrow("no MCP server given");
    expect(() => parseServerSpec("http://x.test/mcp", { env: ["A=1"] })).toThrow("--env applies to servers started from a command");
    expect(() => parseServerSpec("node s.js", { header: ["A: 1"] })).toThrow("--header applies to servers reached by URL");
    expect(() => parseServerSpec("node s.js", { env: ["NOVALUE"] })).toThrow("--env `NOVALUE` is not a pair");
  });
});
