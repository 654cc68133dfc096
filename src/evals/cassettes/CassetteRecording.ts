import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentEvent } from "../../agent/index.js";
import type { Model, ModelRequest } from "../../providers/Model.js";
import type { ModelCallRecord, StoredMessage, ToolCallStoredRecord } from "../../store/RunRecord.js";
import { toReplayTurns } from "../../store/toReplayScript.js";
import { yaml } from "../../util/lazyYaml.js";

type RecordedCall = Pick<ModelCallRecord, "agent" | "messages" | "tools" | "reply" | "tool_calls" | "prompt_tokens" | "completion_tokens" | "finish_reason">;

/** How every text of a cassette is cleared of secrets before it is written. */
export interface Redaction {
  redact(text: string): string;
  redactValue<T>(value: T): T;
}

/** What a cassette notes beside the turns. */
export interface CassetteHeader {
  tactic: string;
  test: string;
  case: string;
}

/**
 * What one live run of a case (all its turns, and its judges' calls) asked the models and what they answered,
 * to be written as the case's cassette. The models are wrapped (`model`), so each answer is kept with the very
 * request it answered, whatever the order across agents; tool results come from the run's events.
 */
export class CassetteRecording {
  readonly #calls: RecordedCall[] = [];
  readonly #toolResults: Array<Pick<ToolCallStoredRecord, "agent" | "call_id" | "result">> = [];

  /** The model, with each of its calls kept. */
  model(inner: Model): Model {
    return {
      name: inner.name,
      generate: async (request: ModelRequest) => {
        const messages = request.messages.map(storedMessage);
        const tools = (request.tools ?? []).map((tool) => tool.function.name);
        const response = await inner.generate(request);
        this.#calls.push({
          agent: request.agent ?? "(model)",
          messages,
          tools,
          reply: response.message.content,
          tool_calls: response.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
          prompt_tokens: response.usage.promptTokens,
          completion_tokens: response.usage.completionTokens,
          finish_reason: response.finishReason ?? null,
        });
        return response;
      },
    };
  }

  /** Feed the run's events: tool results are kept with their calls. */
  onEvent(event: AgentEvent): void {
    if (event.type === "tool_call") this.#toolResults.push({ agent: event.agent, call_id: event.call.id, result: event.call.resultStr ?? null });
  }

  /** Whether any model call was made (a run stopped before its first call records nothing). */
  get empty(): boolean {
    return this.#calls.length === 0;
  }

  /**
   * Write the cassette (a `scripted:` model file, by agent), every text redacted of the secrets `redactor` knows,
   * through a temporary file so that a reader never sees half of it.
   */
  write(file: string, header: CassetteHeader, redactor: Redaction): void {
    const agents = redactor.redactValue(toReplayTurns({ model_calls: this.#calls, tool_calls: this.#toolResults }));
    const intro = [
      `# The model's turns of case "${header.case.replace(/\n/g, " ")}" of ${header.test}, by agent, recorded by \`lllm test --record\`.`,
      "# `lllm test` replays them (no key, no network; the tools run for real); `lllm test --update` records them again.",
      "# It is a `scripted:` model file too: lllm run TACTIC --model scripted:THIS_FILE --input ...",
    ].join("\n");
    const text = redactor.redact(`${intro}\n${yaml.stringify({ tactic: header.tactic, test: header.test, case: header.case, recorded_at: new Date().toISOString(), agents }, { lineWidth: 0 })}`);
    mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, text);
    renameSync(temporary, file);
  }
}

function storedMessage(message: ModelRequest["messages"][number]): StoredMessage {
  const stored: StoredMessage = { role: message.role, content: message.content };
  if (message.role === "assistant" && message.toolCalls) stored.toolCalls = message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
  if (message.role === "tool") {
    stored.toolCallId = message.toolCallId;
    if (message.name !== undefined) stored.name = message.name;
  }
  return stored;
}
