import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli } from "./storeTestHelpers.js";

const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");

type OtlpValue = { stringValue?: string; intValue?: string | number; arrayValue?: { values: OtlpValue[] } };
type OtlpSpan = { name: string; spanId: string; parentSpanId?: string; traceId: string; attributes: Array<{ key: string; value: OtlpValue }> };

let receiver: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  receiver = undefined;
  removeTempDirs();
});

/** A local OTLP/HTTP (JSON) trace receiver: every span posted to /v1/traces. */
async function startReceiver(): Promise<{ url: string; spans: OtlpSpan[]; paths: string[] }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      paths.push(`${request.method} ${request.url} ${request.headers["content-type"]}`);
      const data = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const resource of data.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, spans, paths };
}

function attributes(span: OtlpSpan): Record<string, unknown> {
  const plain = (value: OtlpValue): unknown => value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.arrayValue?.values.map(plain));
  return Object.fromEntries(span.attributes.map((entry) => [entry.key, plain(entry.value)]));
}

describe("OpenTelemetry export", { timeout: 120_000 }, () => {
  it("sends the run, the agent turn, each model call and each tool call as GenAI spans, contents only when asked", async () => {
    const otlp = await startReceiver();
    const home = tempDir();
    const run = await cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris and Tokyo?", "--no-stream", "--no-log"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(otlp.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
    const names = otlp.spans.map((span) => span.name).sort();
    const model = `scripted:${parisTokyo}`;
    expect(names).toEqual([`chat ${model}`, `chat ${model}`, "execute_tool get_weather", "execute_tool get_weather", "invoke_agent weather", "invoke_agent weather_bot"].sort());
    const byName = (name: string): OtlpSpan[] => otlp.spans.filter((span) => span.name === name);
    const root = byName("invoke_agent weather")[0]!;
    const turn = byName("invoke_agent weather_bot")[0]!;
    expect(turn.parentSpanId).toBe(root.spanId);
    const chats = byName(`chat ${model}`);
    for (const chat of chats) expect(chat.parentSpanId).toBe(turn.spanId);
    expect(attributes(chats[0]!)).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "gen_ai.agent.name": "weather_bot" });
    const usage = chats.map((chat) => attributes(chat));
    expect(usage.map((entry) => entry["gen_ai.response.finish_reasons"]).sort()).toEqual([["stop"], ["tool_calls"]]);
    for (const entry of usage) {
      expect(entry["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
      expect(entry["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      expect(entry).not.toHaveProperty("gen_ai.input.messages");
    }
    const tool = attributes(byName("execute_tool get_weather")[0]!);
    expect(tool).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather" });
    expect(tool).not.toHaveProperty("gen_ai.tool.call.arguments");
    expect(new Set(otlp.spans.map((span) => span.traceId)).size).toBe(1);

    const withContent = await startReceiverAgain();
    const again = await cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris? key sk-otel-secret-0042", "--no-stream", "--no-log"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: withContent.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true", MY_API_KEY: "sk-otel-secret-0042" } });
    expect(again.code, again.stderr).toBe(0);
    const chat = withContent.spans.find((span) => span.name.startsWith("chat "))!;
    const input = String(attributes(chat)["gen_ai.input.messages"]);
    expect(input).toContain("Paris? key [redacted]");
    expect(JSON.stringify(withContent.spans)).not.toContain("sk-otel-secret-0042");
    expect(attributes(withContent.spans.find((span) => span.name === "execute_tool get_weather")!)["gen_ai.tool.call.arguments"]).toMatch(/"city":"(Paris|Tokyo)"/);
  });
});

/** A second receiver for the second run (the first is closed in afterEach). */
async function startReceiverAgain(): Promise<{ url: string; spans: OtlpSpan[] }> {
  await new Promise((resolve) => receiver!.close(resolve));
  return startReceiver();
}
