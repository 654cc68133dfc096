import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCli, type RunningCli } from "../helpers/processTree.js";
import { startServeCli } from "../helpers/serve.js";
import { tempTree } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** A key as long as OpenAI's project keys: the redaction of streamed text holds back in proportion to it. */
const KEY = `sk-proj-${"Xq7_Lm2-Rt9zWv4K".repeat(10)}`;

const BEFORE = "It is sunny in Paris today, 22 degrees, with a light wind from the west. ";
const AFTER = "Tomorrow looks the same.";

/**
 * An OpenAI-compatible model that streams the first sentence of its answer, then waits until the test has seen that
 * sentence arrive (`release`), then streams the rest: a client that only gets the answer at its end never sees it.
 */
class HeldModel {
  private server: Server | undefined;
  private released: () => void = () => {};
  private readonly open = new Set<() => void>();
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null = null): string => `data: ${JSON.stringify({ id: "chatcmpl-held", object: "chat.completion.chunk", created: 0, model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        response.write(chunk({ role: "assistant", content: "" }));
        for (const word of BEFORE.split(/(?<= )/)) response.write(chunk({ content: word }));
        const rest = (): void => {
          this.open.delete(rest);
          response.write(chunk({ content: AFTER }));
          response.write(chunk({}, "stop"));
          response.end("data: [DONE]\n\n");
        };
        this.open.add(rest);
        this.released = rest;
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  release(): void {
    this.released();
  }

  async stop(): Promise<void> {
    for (const rest of [...this.open]) rest();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

function weatherTactic(baseUrl: string): string {
  return tempTree({
    "weather.yaml": `name: weather\nprompt: "{input}"\nagent_configs:\n  - name: forecaster\n    system_prompt: You forecast.\n    model_name: gpt-test\n    invoker_config: {base_url: "${baseUrl}"}\n`,
  }, "lllm-stream-");
}

describe("a streamed answer arrives as it is written, with a key registered for redaction", () => {
  let model: HeldModel;
  let cli: RunningCli | undefined;

  beforeEach(async () => {
    model = new HeldModel();
    await model.start();
  });

  afterEach(async () => {
    cli?.killTree();
    cli = undefined;
    await model.stop();
  });

  it("lllm run --stream prints each sentence before the model has finished", async () => {
    const dir = weatherTactic(model.url);
    cli = startCli(["run", `${dir}/weather.yaml`, "--input", "Weather?", "--stream", "--no-log"], { env: { OPENAI_API_KEY: KEY } });
    // Held back until the answer's end (the redaction of a key split across pieces waited for a line's end), the
    // first sentence never arrived while the model waited.
    const seen = await waitUntil(() => cli!.stdout().includes("light wind from the"), 60_000);
    model.release();
    expect(seen, `stdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`).toBe(true);
    expect(await cli.exit(60_000)).toBe(0);
    expect(cli.stdout()).toBe(`${BEFORE}${AFTER}\n`);
  }, 120_000);

  it("a streaming client of lllm serve gets the first sentence before the model has finished", async () => {
    const dir = weatherTactic(model.url);
    const served = await startServeCli([`${dir}/weather.yaml`], { args: ["--no-auth"], env: { OPENAI_API_KEY: KEY } });
    cli = served.cli;
    const response = await fetch(`${served.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "weather", stream: true, messages: [{ role: "user", content: "Weather?" }] }) });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let events = "";
    const content = (): string =>
      events
        .split("\n")
        .filter((line) => line.startsWith("data: {"))
        .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? "")
        .join("");
    const read = (async (): Promise<void> => {
      for (let next = await reader.read(); !next.done; next = await reader.read()) events += decoder.decode(next.value, { stream: true });
    })();
    const seen = await waitUntil(() => content().includes("light wind from the"), 60_000);
    model.release();
    expect(seen, events).toBe(true);
    await read;
    expect(content()).toBe(`${BEFORE}${AFTER}`);
  }, 120_000);
});
