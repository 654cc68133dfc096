import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { tempTree } from "../helpers/tempTree.js";

/**
 * A tool's context outside MCP (`lllm run`): progress and logs on stderr, `ctx.sample` answered by the agent's own
 * model, `ctx.elicit` refused without a terminal (the model reads why), and a rich result whose image reaches the
 * model while the text keeps seed 000's result block.
 */

const PNG = readFileSync(path.join(ROOT, "test/fixtures/mcp-conformance/assets/red-pixel.png")).toString("base64");

const TOOL = `import { tool, toolResult } from "lllm";
export const paint = tool({
  name: "paint",
  description: "Paint a picture of a topic",
  parameters: { topic: { type: "string" } },
  run: async ({ topic }, ctx) => {
    await ctx.progress(1, 2, "mixing colours");
    await ctx.log("info", "canvas ready");
    const colour = await ctx.sample({ messages: "Name one colour for " + topic, systemPrompt: "Answer in one word.", maxTokens: 20 });
    let asked;
    try {
      await ctx.elicit({ message: "Which size?", requestedSchema: { type: "object", properties: { size: { type: "string", enum: ["s", "m"] } } } });
      asked = "answered";
    } catch (error) {
      asked = error.message;
    }
    return toolResult({ content: [{ type: "text", text: "painted " + topic + " in " + colour.text + "; asked: " + asked }, { type: "image", data: "${PNG}", mimeType: "image/png" }] });
  },
});
`;

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Wire = { role: string; content?: unknown; tool_calls?: unknown[] };

describe("a tool's context in `lllm run`", () => {
  it("reports progress and logs on stderr, samples the agent's model, refuses elicitation without a terminal, and shows the image to the model", async () => {
    const dir = tempTree({
      "pkg/lllm.toml": '[package]\nname = "painter"\nversion = "1.0.0"\n',
      "pkg/tools/paint.ts": TOOL,
      "tactic.yaml": "name: painting\npackages: [./pkg]\nglobal:\n  model_name: gpt-test\n  tools: [paint]\nagent_configs:\n  - name: painter\n    system_prompt: You paint.\n",
    });
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "paint", arguments: { topic: "the sea" } }] }, "blue", "A blue sea."] });
    const result = await runCli(["run", path.join(dir, "tactic.yaml"), "--input", "Paint the sea"], { env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url } });
    expect(result.stdout).toBe("A blue sea.\n");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("progress 1/2 (50%): mixing colours");
    expect(result.stderr).toContain("info: canvas ready");

    const posts = server.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(3);
    // The sample: the agent's own model, the tool's messages only, no tools, the tool's token limit.
    expect(posts[1]!.body.messages).toEqual([{ role: "system", content: "Answer in one word." }, { role: "user", content: "Name one colour for the sea" }]);
    expect(posts[1]!.body.tools).toBeUndefined();
    expect(posts[1]!.body.max_tokens ?? posts[1]!.body.max_completion_tokens).toBe(20);

    const dialog = posts[2]!.body.messages as Wire[];
    expect(dialog.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    const text = String(dialog[3]!.content);
    expect(text).toMatch(/^Return of calling function paint with arguments \{'topic': 'the sea'\}:\n---\npainted the sea in blue; asked: tool paint asked the user a question \(ctx\.elicit\), but there is nobody to ask/);
    expect(text).toContain("[image");
    expect(dialog[4]!.content).toEqual([
      { type: "text", text: expect.stringContaining("returned by paint") },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  }, 60_000);
});
