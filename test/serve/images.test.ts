import OpenAI from "openai";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer, type MockAnthropicServer, type MockGeminiServer, type MockOpenAIServer, type MockRequestBody } from "../../src/testing/index.js";
import { RunStore } from "../../src/store/RunStore.js";
import { dialogOfRun } from "../../src/store/dialogOfRun.js";
import { formatTranscript } from "../../src/store/formatTranscript.js";
import { serveInProcess, shopPackage, type ServingLibrary } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 120_000 });

// Images in a client's messages reach the tactic's model, in each provider's own form. The tactics' models are the
// mock servers of lllm/testing; the clients are the official openai SDK and plain fetch for the refusals.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==";
let openai: MockOpenAIServer;
let anthropic: MockAnthropicServer;
let gemini: MockGeminiServer;
let serving: ServingLibrary;
let client: OpenAI;
let home: string;

const lastPost = (server: { requests: Array<{ method: string; body: unknown }> }): MockRequestBody => server.requests.filter((request) => request.method === "POST").at(-1)!.body as MockRequestBody;
type Part = Record<string, unknown>;
const userParts = (body: MockRequestBody): Part[][] => ((body.messages ?? []) as Array<{ role: string; content: string | Part[] }>).filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content));

const agentTactic = (name: string, model: string, baseUrl: string, extra = ""): string =>
  `name: ${name}\nprompt: "{input}"\nagent_configs:\n  - name: eye\n    system_prompt: You look at pictures.\n    model_name: ${model}\n    invoker_config: {base_url: "${baseUrl}"}\n${extra}`;

beforeAll(async () => {
  home = tempDir("lllm-home-");
  vi.stubEnv("LLLM_HOME", home);
  vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-test");
  vi.stubEnv("GEMINI_API_KEY", "AIza-test");
  openai = await startMockOpenAIServer({ handler: () => "A red dot." });
  anthropic = await startMockAnthropicServer({ handler: () => "A red dot, says Claude." });
  gemini = await startMockGeminiServer({ handler: () => "A red dot, says Gemini." });
  const dir = shopPackage(openai.url, {
    eye_responses: agentTactic("eye_responses", "gpt-test", openai.url, "    api_type: response\n"),
    eye_claude: agentTactic("eye_claude", "anthropic/claude-test", anthropic.url),
    eye_gemini: agentTactic("eye_gemini", "gemini/gemini-test", gemini.url),
    steps: `name: steps\ntactic_type: pipeline\nagent_configs:\n  - name: one\n    system_prompt: Step.\n    model_name: gpt-test\n    invoker_config: {base_url: "${openai.url}"}\nsteps:\n  - agent: one\n`,
  });
  const tactics = ["shop", "eye_responses", "eye_claude", "eye_gemini", "steps"].map((name) => path.join(dir, `tactics/${name}.yaml`));
  serving = await serveInProcess({ tactics, token: "tok-images" });
  client = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: "tok-images", maxRetries: 0 });
});

afterAll(async () => {
  await serving?.server.stop({ drainTimeoutMs: 0 });
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

describe("images in a client's messages", () => {
  it("chat completions: the user's image parts follow the text to the model, earlier turns' images too; the record notes them, keeps no image data", async () => {
    const completion = await client.chat.completions.create({
      model: "shop",
      messages: [
        { role: "user", content: [{ type: "text", text: "Remember this one." }, { type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG}` } }] },
        { role: "assistant", content: "Done." },
        { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "low" } }, { type: "text", text: "What is in this picture?" }] },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe("A red dot.");
    expect(userParts(lastPost(openai))).toEqual([
      [{ type: "text", text: "Remember this one." }, { type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG}` } }],
      [{ type: "text", text: "What is in this picture?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }],
    ]);
    const store = RunStore.openSync(path.join(home, "logs.db"));
    try {
      const run = store.getRun(store.listRuns({ limit: 1 })[0]!.id)!;
      const user = run.model_calls[0]!.messages.filter((message) => message.role === "user");
      expect(user.map((message) => [message.content, message.media])).toEqual([
        ["Remember this one.", [expect.stringMatching(/^\[image: image\/jpeg, \d+ bytes\]$/)]],
        ["What is in this picture?", ["[image: image/png, 70 bytes]"]],
      ]);
      expect(JSON.stringify(run)).not.toContain(PNG.slice(0, 40));
      // `lllm logs show`'s transcript shows the notes.
      expect(formatTranscript(run)).toContain("  [user] What is in this picture?\n  [user] [image: image/png, 70 bytes]");
      // `lllm run --continue` of it: the images are their notes, in the text the model is sent.
      expect(dialogOfRun(run)!.messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual([expect.stringMatching(/^Remember this one\.\n\[image: image\/jpeg, \d+ bytes\]$/), "What is in this picture?\n[image: image/png, 70 bytes]"]);
    } finally {
      store.close();
    }
  });

  it("the Responses API: input_image parts reach the model, and previous_response_id sends them again", async () => {
    const first = await client.responses.create({ model: "eye_responses", input: [{ role: "user", content: [{ type: "input_text", text: "What is this?" }, { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" }] }] });
    expect(first.output_text).toBe("A red dot.");
    const image = { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" };
    expect((lastPost(openai).input as Part[]).filter((item) => item.role === "user").map((item) => item.content)).toEqual([[{ type: "input_text", text: "What is this?" }, image]]);
    await client.responses.create({ model: "eye_responses", input: "And its colour?", previous_response_id: first.id });
    expect((lastPost(openai).input as Part[]).filter((item) => item.role === "user").map((item) => item.content)).toEqual([[{ type: "input_text", text: "What is this?" }, image], "And its colour?"]);
  });

  it("an Anthropic model gets image blocks, a Gemini model inline data", async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }];
    expect((await client.chat.completions.create({ model: "eye_claude", messages })).choices[0]!.message.content).toBe("A red dot, says Claude.");
    expect((lastPost(anthropic).messages as Array<{ role: string; content: Part[] }>)[0]).toEqual({ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] });
    expect((await client.chat.completions.create({ model: "eye_gemini", messages })).choices[0]!.message.content).toBe("A red dot, says Gemini.");
    expect((lastPost(gemini).contents as Array<{ role: string; parts: Part[] }>)[0]).toEqual({ role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: PNG } }] });
  });

  it("sends an image as the type its bytes say: image/jpg is JPEG, PNG bytes labelled JPEG go as PNG", async () => {
    const ask = (url: string) => client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] });
    await ask(`data:image/jpg;base64,${JPEG}`);
    expect(userParts(lastPost(openai)).at(-1)).toEqual([{ type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG}` } }]);
    await ask(`data:image/jpeg;base64,${PNG}`);
    expect(userParts(lastPost(openai)).at(-1)).toEqual([{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }]);
  });

  it("refuses what it cannot pass on with a 400 naming the part: a remote URL (never fetched), another type, bad base64, an image outside a user message, a tactic of another pattern", async () => {
    const fetchesBefore = openai.requests.length;
    const post = async (body: unknown, route = "chat/completions"): Promise<{ status: number; error: Record<string, unknown> }> => {
      const response = await fetch(`${serving.url}/v1/${route}`, { method: "POST", headers: { authorization: "Bearer tok-images", "content-type": "application/json" }, body: JSON.stringify(body) });
      return { status: response.status, error: ((await response.json()) as { error: Record<string, unknown> }).error };
    };
    const withImage = (url: string, role = "user", model = "shop"): unknown => ({ model, messages: [{ role, content: [{ type: "text", text: "Look" }, { type: "image_url", image_url: { url } }] }, ...(role === "user" ? [] : [{ role: "user", content: "hi" }])] });
    const cases: Array<[unknown, string | undefined, Record<string, unknown>]> = [
      [withImage(`${openai.url}/secret.png`), undefined, { code: "unsupported_content", param: "messages[0].content[1].image_url.url", message: expect.stringContaining("fetches no URL") }],
      [withImage(`data:image/bmp;base64,${PNG}`), undefined, { code: "unsupported_content", param: "messages[0].content[1].image_url.url", message: expect.stringContaining("PNG, JPEG, GIF or WebP") }],
      [withImage("data:image/png;base64,not base64!"), undefined, { code: "invalid_value", param: "messages[0].content[1].image_url.url" }],
      [withImage("data:image/png;base64,AAAAAAAAAAAAAAAA"), undefined, { code: "invalid_value", param: "messages[0].content[1].image_url.url", message: expect.stringContaining("not a PNG, JPEG, GIF or WebP image") }],
      [{ model: "shop", messages: [{ role: "user", content: [{ type: "image_url" }] }] }, undefined, { code: "missing_required_parameter", param: "messages[0].content[0].image_url" }],
      [withImage(`data:image/png;base64,${PNG}`, "system"), undefined, { code: "unsupported_content", param: "messages[0].content[1]", message: expect.stringContaining("user messages only") }],
      [withImage(`data:image/png;base64,${PNG}`, "user", "steps"), undefined, { code: "unsupported_content", param: "messages", message: expect.stringContaining("pipeline tactic") }],
      [{ model: "shop", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] }, undefined, { code: "unsupported_content", param: "messages[0].content[0]" }],
      [{ model: "eye_responses", input: [{ role: "user", content: [{ type: "input_image", file_id: "file-123" }] }] }, "responses", { code: "unsupported_content", param: "input[0].content[0].file_id" }],
    ];
    for (const [body, route, error] of cases) expect(await post(body, route)).toEqual({ status: 400, error: expect.objectContaining(error) });
    // Nothing was fetched from the URL, and no refused request reached the model.
    expect(openai.requests.length).toBe(fetchesBefore);
  });
});
