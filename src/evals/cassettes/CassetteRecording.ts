import type { AgentEvent } from "../../agent/index.js";
import type { Model, ModelRequest } from "../../providers/Model.js";
import type { ModelCallRecord, StoredMessage, ToolCallStoredRecord } from "../../store/RunRecord.js";
import { toReplayTurns } from "../../store/toReplayScript.js";
import { yaml } from "../../util/lazyYaml.js";
import { CASSETTE_LIMITS, formatSize } from "./cassetteLimits.js";
import { writeCassetteText } from "./cassettePath.js";
import { SetupRecorder } from "./CassetteSetup.js";

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
 * request it answered, whatever the order across agents; tool results come from the run's events. Beside the
 * turns, the setup of each agent's calls: the model that answered and each tool as the model read it.
 */
export class CassetteRecording {
  readonly #calls: RecordedCall[] = [];
  readonly #toolResults: Array<Pick<ToolCallStoredRecord, "agent" | "call_id" | "result">> = [];
  readonly #setup = new SetupRecorder();

  /** The model, with each of its calls kept. */
  model(inner: Model): Model {
    return {
      name: inner.name,
      generate: async (request: ModelRequest) => {
        const messages = request.messages.map(storedMessage);
        const tools = (request.tools ?? []).map((tool) => tool.function.name);
        const response = await inner.generate(request);
        const agent = request.agent ?? "(model)";
        // The model that answered: a fallback chain's models are wrapped one by one, so one that failed is not kept.
        this.#setup.note(agent, inner.name, request.tools ?? []);
        this.#calls.push({
          agent,
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
   * Write the cassette (a `scripted:` model file, by agent), every text redacted of the secrets `redactor` knows, through
   * a temporary file so that a reader never sees half of it, never through a link (see `writeCassetteText`). Throws
   * when it cannot be written, or would be more than a replay reads (`CASSETTE_LIMITS`).
   */
  write(file: string, header: CassetteHeader, redactor: Redaction): void {
    const agents = redactor.redactValue(toReplayTurns({ model_calls: this.#calls, tool_calls: this.#toolResults }));
    const setup = redactor.redactValue(this.#setup.setup);
    const turns = Object.values(agents).reduce((total, list) => total + list.length, 0);
    if (turns > CASSETTE_LIMITS.maxTurns) throw new Error(`the run made ${turns} model calls; a cassette holds at most ${CASSETTE_LIMITS.maxTurns}`);
    const intro = [
      `# The model's turns of case ${oneLine(header.case)} of ${oneLine(header.test)}, by agent, recorded by \`lllm test --record\`.`,
      "# `lllm test` replays them (no key, no network; the tools run for real); `lllm test --update` records them again.",
      "# `setup`: the model that answered each agent and each tool as the model read it; a replay that changes one diverges.",
      "# It is a `scripted:` model file too: lllm run TACTIC --model scripted:THIS_FILE --input ...",
    ].join("\n");
    const text = redactor.redact(`${intro}\n${yaml.stringify({ tactic: header.tactic, test: header.test, case: header.case, recorded_at: new Date().toISOString(), setup, agents }, { lineWidth: 0 })}`);
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > CASSETTE_LIMITS.maxBytes) throw new Error(`it would be ${formatSize(bytes)}; a cassette may be at most ${formatSize(CASSETTE_LIMITS.maxBytes)}`);
    writeCassetteText(file, text);
  }
}

/** A text for a comment line: quoted, with every control character and line break escaped (a line break would end the comment). */
function oneLine(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\u009f\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
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
