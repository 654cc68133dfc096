import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { createModel } from "../../src/providers/createModel.js";
import { toGeminiSchema } from "../../src/providers/toGeminiSchema.js";
import { startMockGeminiServer, type GeminiFailure, type MockGeminiServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** Gemini's generateContent API end to end: the built CLI against a local server of Gemini's wire format. */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const output = path.join(ROOT, "test/fixtures/run/output.yaml");
const home = tempDir("lllm-gemini-home-");
let server: MockGeminiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Part = Record<string, unknown>;
type Content = { role: string; parts: Part[] };

async function run(args: string[], script: ScriptedTurn[], options: { failures?: GeminiFailure[]; tactic?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  server = await startMockGeminiServer({ script, ...(options.failures ? { failures: options.failures } : {}) });
  return runCli(["run", options.tactic ?? loop, "--model", "gemini/gemini-2.5-flash", ...args], {
    env: { GEMINI_API_KEY: "AIza-test-0000", GEMINI_BASE_URL: server.url, LLLM_HOME: home, LLLM_RETRY_DELAY_MS: "1", OPENAI_API_KEY: "", ...options.env },
    timeoutMs: 60_000,
  });
}

const bodyOf = (index: number): Part => server!.requests[index]!.body as Part;
const contentsOf = (index: number): Content[] => bodyOf(index)["contents"] as Content[];
const weather: ScriptedTurn[] = [
  { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_weather", arguments: { city: "Tokyo" } }] },
  "It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.",
];

describe("gemini/<model> through the CLI", () => {
  for (const stream of ["--no-stream", "--stream"]) {
    it(`runs the seed's weather transcript with parallel calls (${stream})`, async () => {
      const result = await run(["--input", "What is the weather in Paris and Tokyo?", stream], weather);
      expect(result.stderr).toBe("");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
      const first = server!.requests[0]!;
      expect(first.path).toBe(`/v1beta/models/gemini-2.5-flash:${stream === "--stream" ? "streamGenerateContent" : "generateContent"}`);
      expect(first.headers["x-goog-api-key"]).toBe("AIza-test-0000");
      expect(first.headers["authorization"]).toBeUndefined();
      const body = bodyOf(0);
      expect(body["systemInstruction"]).toEqual({ parts: [{ text: "You are a weather assistant." }] });
      expect(contentsOf(0)).toEqual([{ role: "user", parts: [{ text: "What is the weather in Paris and Tokyo?" }] }]);
      const declarations = (body["tools"] as Array<{ functionDeclarations: Part[] }>)[0]!.functionDeclarations;
      expect(declarations.map((declaration) => declaration["name"])).toEqual(["get_weather", "divide"]);
      expect(declarations[0]!["parameters"]).toMatchObject({ type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] });
      const second = contentsOf(1);
      expect(second).toHaveLength(3);
      expect(second[1]).toEqual({ role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }, { functionCall: { name: "get_weather", args: { city: "Tokyo" } } }] });
      expect(second[2]!.role).toBe("user");
      expect(second[2]!.parts).toEqual([
        { functionResponse: { name: "get_weather", response: { result: "Return of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---" } } },
        { functionResponse: { name: "get_weather", response: { result: "Return of calling function get_weather with arguments {'city': 'Tokyo'}:\n---\nSunny, 22 degrees celsius in Tokyo\n---" } } },
      ]);
    }, 90_000);
  }

  it("sends a failing tool's error back as an error response", async () => {
    const result = await run(["--input", "Divide", "--no-stream"], [{ tool_calls: [{ name: "divide", arguments: { a: 1, b: 0 } }] }, "Cannot divide by zero."]);
    expect(result.code, result.stderr).toBe(0);
    const response = (contentsOf(1)[2]!.parts[0]!["functionResponse"] as { response: Record<string, unknown> }).response;
    expect(Object.keys(response)).toEqual(["error"]);
    expect(String(response["error"])).toContain("Error");
  }, 90_000);

  it("at the round cap, no tools are offered and the limit text follows the responses", async () => {
    const result = await run(["--input", "Weather?", "--max-steps", "1", "--no-stream"], [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "Done."]);
    expect(result.code, result.stderr).toBe(0);
    expect(bodyOf(1)["tools"]).toBeUndefined();
    expect(contentsOf(1)[2]!.parts.map((part) => Object.keys(part)[0])).toEqual(["functionResponse", "text"]);
  }, 90_000);

  it("retries a 429 after the RetryInfo delay, then answers", async () => {
    const result = await run(["--input", "Hi", "--no-stream", "--verbose"], ["Hello."], { failures: [{ status: 429, message: "Resource has been exhausted (e.g. check quota).", retryDelaySeconds: 0 }] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Hello.");
    expect(result.stderr).toContain("429");
    expect(server!.requests).toHaveLength(2);
  }, 90_000);

  it("a 401 is a provider error naming GEMINI_API_KEY, not retried, and the key is not printed", async () => {
    const result = await run(["--input", "Hi", "--json"], [], { failures: [{ status: 401, message: "API key not valid: AIza-test-0000" }] });
    expect(result.code, result.stderr).toBe(1);
    expect(server!.requests).toHaveLength(1);
    const report = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(report.error.code).toBe("provider_auth");
    expect(report.error.message).toContain("GEMINI_API_KEY");
    expect(result.stdout + result.stderr).not.toContain("AIza-test-0000");
  }, 90_000);

  it("structured output uses responseSchema; GOOGLE_API_KEY works too", async () => {
    const result = await run(["--input", "Paris", "--json", "--no-stream"], ['{"city": "Paris", "temperature": 22}'], { tactic: output, env: { GEMINI_API_KEY: "", GOOGLE_API_KEY: "AIza-google-1111" } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { output: unknown }).output).toEqual({ city: "Paris", temperature: 22 });
    expect(server!.requests[0]!.headers["x-goog-api-key"]).toBe("AIza-google-1111");
    expect(bodyOf(0)["generationConfig"]).toMatchObject({ responseMimeType: "application/json", responseSchema: { type: "OBJECT", properties: { city: { type: "STRING" }, temperature: { type: "NUMBER" } } } });
  }, 90_000);

  it("--dry-run prints the generateContent body", async () => {
    const result = await run(["--input", "Hi", "--dry-run"], []);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], systemInstruction: { parts: [{ text: "You are a weather assistant." }] } });
    expect(server!.requests).toHaveLength(0);
  }, 90_000);
});

describe("Gemini schema conversion", () => {
  it("converts what Gemini can express", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
      $defs: { unit: { type: "string", enum: ["c", "f"] } },
      properties: {
        city: { type: "string", description: "City", format: "uri" },
        when: { type: ["string", "null"], format: "date-time" },
        unit: { $ref: "#/$defs/unit" },
        kind: { const: "daily" },
        days: { type: "integer", minimum: 1, maximum: 7 },
        tags: { type: "array", items: { type: "string" } },
        place: { oneOf: [{ type: "string" }, { type: "object", properties: { lat: { type: "number" } } }] },
        note: { anyOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["city"],
    };
    expect(toGeminiSchema(schema, "t")).toEqual({
      type: "OBJECT",
      properties: {
        city: { type: "STRING", description: "City" },
        when: { type: "STRING", nullable: true, format: "date-time" },
        unit: { type: "STRING", enum: ["c", "f"] },
        kind: { type: "STRING", enum: ["daily"] },
        days: { type: "INTEGER", minimum: 1, maximum: 7 },
        tags: { type: "ARRAY", items: { type: "STRING" } },
        place: { anyOf: [{ type: "STRING" }, { type: "OBJECT", properties: { lat: { type: "NUMBER" } } }] },
        note: { type: "STRING", nullable: true },
      },
      required: ["city"],
    });
  });

  const cannot: Array<[string, Record<string, unknown>, string]> = [
    ["allOf", { type: "object", properties: { a: { allOf: [{ type: "string" }, { minLength: 1 }] } } }, "`allOf` at the root.properties.a"],
    ["a map", { type: "object", additionalProperties: { type: "number" } }, "`additionalProperties` with a schema"],
    ["a recursive $ref", { $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" }, "recursive `$ref`"],
    ["a number enum", { type: "object", properties: { n: { enum: [1, 2] } } }, "non-string `enum`"],
    ["a type union", { type: "object", properties: { v: { type: ["string", "number"] } } }, "type union"],
    ["if/then", { type: "object", if: { properties: {} }, then: {} }, "`if`"],
  ];
  for (const [what, schema, says] of cannot) {
    it(`refuses ${what} with a ConfigError naming the tool and the place`, () => {
      let error: unknown;
      try {
        toGeminiSchema(schema, "lookup");
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain("tool `lookup`");
      expect((error as Error).message).toContain(says);
    });
  }

  it("a tool Gemini cannot take fails the run before any request (exit 2)", async () => {
    server = await startMockGeminiServer({ script: ["never"] });
    const model = createModel({ model: "gemini/gemini-2.5-flash", env: { GEMINI_API_KEY: "k", GEMINI_BASE_URL: server.url } });
    const tool = { type: "function" as const, function: { name: "lookup", description: "d", parameters: { type: "object", properties: { m: { type: "object", additionalProperties: { type: "string" } } } } } };
    await expect(model.generate({ messages: [{ role: "user", content: "Hi" }], tools: [tool] })).rejects.toThrow(/tool `lookup`: Gemini cannot take `additionalProperties` with a schema/);
    expect(server.requests).toHaveLength(0);
  });

  it("needs GEMINI_API_KEY or GOOGLE_API_KEY for the hosted API, before any call", () => {
    expect(() => createModel({ model: "gemini/gemini-2.5-flash", env: {} })).toThrow(/GEMINI_API_KEY \(or GOOGLE_API_KEY\)/);
  });
});

describe("a tool Gemini cannot take, at load time", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-gemini-pkg-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function tactic(): string {
    mkdirSync(path.join(dir, "tools"), { recursive: true });
    writeFileSync(path.join(dir, "tools", "lookup.js"), 'export default { name: "lookup", description: "Look up labels", parameters: { type: "object", properties: { labels: { type: "object", additionalProperties: { type: "string" } } }, required: ["labels"] }, run: () => "ok" };\n');
    writeFileSync(path.join(dir, "t.yaml"), "name: t\npackages: [.]\nprompt: \"{input}\"\nagent_configs:\n  - name: a\n    model_name: gemini/gemini-2.5-flash\n    system_prompt: Be brief.\n    tools: [lookup]\n");
    return path.join(dir, "t.yaml");
  }

  it("lllm validate, lllm run and lllm batch fail with exit 2 naming the agent, the tool and the construct; nothing is sent", async () => {
    const file = tactic();
    server = await startMockGeminiServer({ script: ["never"] });
    const env = { GEMINI_API_KEY: "k", GEMINI_BASE_URL: server.url, LLLM_HOME: home };
    const items = path.join(dir, "items.txt");
    writeFileSync(items, "hi\n");
    for (const args of [["validate", file], ["run", file, "--input", "hi"], ["batch", file, "--inputs", items, "--lines", "--quiet"]]) {
      const result = await runCli(args, { env });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr).toContain("agent `a` (model `gemini/gemini-2.5-flash`): tool `lookup`: Gemini cannot take `additionalProperties` with a schema (a map) at the root.properties.labels");
      expect(result.stderr).not.toContain("internal error");
    }
    expect(server.requests).toHaveLength(0);
  }, 90_000);
});

describe("GeminiModel: what goes back with a tool call", () => {
  it("the call's own part (its thoughtSignature) and its id, when Gemini sent one", async () => {
    const { createServer } = await import("node:http");
    const bodies: Array<Record<string, unknown>> = [];
    const answers = [
      { candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc-7", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2ln" }] }, finishReason: "STOP" }] },
      { candidates: [{ content: { role: "model", parts: [{ text: "Sunny." }] }, finishReason: "STOP" }] },
    ];
    const http = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk: Buffer) => (text += chunk.toString()));
      request.on("end", () => {
        bodies.push(JSON.parse(text) as Record<string, unknown>);
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(answers[bodies.length - 1]));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(http.address() as import("node:net").AddressInfo).port}`;
      const model = createModel({ model: "gemini/gemini-3-pro", env: { GEMINI_API_KEY: "k", GEMINI_BASE_URL: url } });
      const first = await model.generate({ messages: [{ role: "user", content: "Weather?" }] });
      expect(first.toolCalls).toEqual([{ id: "fc-7", name: "get_weather", arguments: '{"city":"Paris"}' }]);
      await model.generate({ messages: [{ role: "user", content: "Weather?" }, { role: "assistant", content: null, toolCalls: first.toolCalls }, { role: "tool", content: "Sunny", toolCallId: "fc-7", name: "get_weather" }] });
      const contents = bodies[1]!["contents"] as Array<{ role: string; parts: Part[] }>;
      expect(contents[1]!.parts).toEqual([{ functionCall: { id: "fc-7", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2ln" }]);
      expect(contents[2]!.parts).toEqual([{ functionResponse: { id: "fc-7", name: "get_weather", response: { result: "Sunny" } } }]);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
