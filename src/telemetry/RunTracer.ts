import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { AgentEvent } from "../agent/index.js";

export interface RunTracerOptions {
  tacticName: string;
  lllmVersion: string;
  /** Message contents, tool arguments and results go on spans only when the user asked for them. */
  captureContent: boolean;
  redact: (text: string) => string;
}

/** How long the end of a run may wait for the collector: a dead endpoint must not hold the CLI. */
const EXPORT_TIMEOUT_MS = 5_000;

/**
 * OpenTelemetry spans of one run, following the GenAI semantic conventions: the run, each agent turn
 * (`invoke_agent`), each model call (`chat`) and each tool call (`execute_tool`), exported over OTLP/HTTP to
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter reads the standard OTEL_* variables). Fed by the run's events;
 * loaded only when an endpoint is set.
 */
export class RunTracer {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #options: RunTracerOptions;
  readonly #run: Span;
  readonly #turns = new Map<string, Span>();
  readonly #calls = new Map<object | string, Span>();

  constructor(options: RunTracerOptions) {
    this.#options = options;
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "lllm", "service.version": options.lllmVersion }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ timeoutMillis: EXPORT_TIMEOUT_MS }))],
    });
    this.#tracer = this.#provider.getTracer("lllm", options.lllmVersion);
    this.#run = this.#tracer.startSpan(`invoke_agent ${options.tacticName}`, { kind: SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "invoke_agent", "lllm.tactic": options.tacticName } });
  }

  onEvent(event: AgentEvent): void {
    const { captureContent, redact } = this.#options;
    if (event.type === "model_call") {
      let turn = this.#turns.get(event.agent);
      if (!turn) {
        turn = this.#tracer.startSpan(`invoke_agent ${event.agent}`, { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": event.agent } }, trace.setSpan(context.active(), this.#run));
        this.#turns.set(event.agent, turn);
      }
      const attributes: Attributes = { "gen_ai.operation.name": "chat", "gen_ai.agent.name": event.agent, "lllm.round": event.round };
      if (event.model !== undefined) attributes["gen_ai.request.model"] = event.model;
      if (captureContent && event.sent) attributes["gen_ai.input.messages"] = redact(JSON.stringify(event.sent));
      // By the array sent, which the reply names (two copies of one agent may ask at once).
      this.#calls.set(event.sent ?? event.agent, this.#tracer.startSpan(`chat ${event.model ?? ""}`.trim(), { kind: SpanKind.CLIENT, attributes }, trace.setSpan(context.active(), turn)));
    } else if (event.type === "model_reply") {
      const key = event.sent !== undefined && this.#calls.has(event.sent) ? event.sent : event.agent;
      const span = this.#calls.get(key);
      this.#calls.delete(key);
      if (span) {
        span.setAttributes({
          "gen_ai.usage.input_tokens": event.usage.promptTokens,
          "gen_ai.usage.output_tokens": event.usage.completionTokens,
          "gen_ai.response.finish_reasons": [event.finishReason ?? (event.toolCalls.length > 0 ? "tool_calls" : "stop")],
        });
        if (captureContent) span.setAttribute("gen_ai.output.messages", redact(JSON.stringify([{ role: "assistant", content: event.text, tool_calls: event.toolCalls }])));
        span.end();
      }
      // A reply without tool calls ends the agent's turn.
      if (event.toolCalls.length === 0) {
        this.#turns.get(event.agent)?.end();
        this.#turns.delete(event.agent);
      }
    } else if (event.type === "tool_call") {
      const parent = this.#turns.get(event.agent) ?? this.#run;
      const end = Date.now();
      const { call } = event;
      const attributes: Attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id };
      if (captureContent) {
        attributes["gen_ai.tool.call.arguments"] = redact(JSON.stringify(call.arguments));
        if (call.resultStr !== undefined) attributes["gen_ai.tool.call.result"] = redact(call.resultStr);
      }
      const span = this.#tracer.startSpan(`execute_tool ${call.name}`, { startTime: end - event.durationMs, attributes }, trace.setSpan(context.active(), parent));
      if (call.error !== undefined) {
        span.setAttribute("error.type", "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR, message: redact(call.error) });
      }
      span.end(end);
    }
  }

  /** End the open spans and the run's, and send them (waiting at most a few seconds for the collector). */
  async finish(outcome: { status: string; errorMessage?: string }): Promise<void> {
    for (const span of [...this.#calls.values(), ...this.#turns.values()]) span.end();
    this.#run.setAttribute("lllm.status", outcome.status);
    if (outcome.errorMessage !== undefined) this.#run.setStatus({ code: SpanStatusCode.ERROR, message: this.#options.redact(outcome.errorMessage) });
    this.#run.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#provider.shutdown().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, EXPORT_TIMEOUT_MS + 1_000);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }
}
