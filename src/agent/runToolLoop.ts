import { performance } from "node:perf_hooks";
import type { ApprovalPolicy } from "../approval/index.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import { BudgetError, InterruptedError, LllmError, ModelBehaviorError } from "../errors.js";
import type { HostedTool, Model, ModelRequest, ResponseFormat } from "../providers/Model.js";
import { isParseError, type Prompt } from "../prompts/index.js";
import { toolResultMedia, type FunctionCall, type FunctionTool, type ToolContext } from "../tools/index.js";
import type { AgentEvent } from "./AgentEvent.js";
import { toModelMessage, type Dialog } from "./Dialog.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import type { Message } from "./Message.js";
import { parseReply } from "./parseReply.js";
import { assertToolsOffered, runToolRound } from "./runToolRound.js";
import { sampleWithModel } from "./sampleWithModel.js";
import type { Session } from "./Session.js";

/** Appended as a user message when the round cap is reached; the model is then called once more without tools. */
export const ROUND_LIMIT_TEXT = "You are reaching the limit of tool calls. Provide the final response.";

export interface ToolLoopOptions {
  agent: string;
  model: Model;
  dialog: Dialog;
  /** The tools offered on this turn (see `offeredTools`), already bound. */
  offered: Map<string, FunctionTool>;
  /** Tools the provider runs itself (remote MCP servers), sent with every request that offers tools. */
  hostedTools?: HostedTool[];
  /** The prompt of this turn, whose parser reads the final reply; `undefined` after a plain receive(). */
  turnPrompt: Prompt | undefined;
  /** Rounds of tool calls allowed before the model must answer (already resolved: never 0 here). */
  maxRounds: number;
  maxExceptionRetry: number;
  modelArgs?: Record<string, unknown> | undefined;
  responseFormat?: ResponseFormat | undefined;
  signal?: AbortSignal | undefined;
  onText?: ((delta: string) => void) | undefined;
  onEvent?: ((event: AgentEvent) => void) | undefined;
  toolContext: ToolContext;
  /** Asked before each tool call; it throws when a limit of the run is reached. */
  budget?: ToolBudget | undefined;
  /** Decides calls to tools that need approval; default: refuse them. */
  approve?: ApprovalPolicy | undefined;
}

/**
 * The tool-call loop of one respond() (seed 000, Steps 4 and 5): call the model with the dialog and the offered
 * tools; run the calls it asks for and append their results; repeat until it answers in text, which is parsed
 * and appended as the final assistant message.
 *
 * A reply that fails to parse is retried on a scratch copy: the failed reply and the `Error: … Please fix.`
 * message are sent to the model but never enter the dialog (as in LLLM, where the dialog is forked for each
 * retry), so later turns do not carry the mistakes.
 */
export async function runToolLoop(options: ToolLoopOptions): Promise<Session> {
  const { agent, dialog, offered, onEvent, signal } = options;
  const started = performance.now();
  const usage = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
  const calls: FunctionCall[] = [];
  const interrupts = new Map<number, FunctionCall[][]>();
  const earlier = new Map<string, Promise<FunctionCall>>();
  let round = 0;
  // A tool's `ctx.sample` is answered by this agent's model (its tokens count as the agent's); the other
  // capabilities are the caller's (an MCP client's when the run serves one) or their local meaning.
  const context: ToolContext = {
    ...options.toolContext,
    ...(signal ? { signal } : {}),
    sample: (request) => sampleWithModel(request, { model: options.model, agent, round, modelArgs: options.modelArgs, signal, onEvent }),
  };
  let limitReached = false;
  let retries = 0;
  let scratch: Message[] = [];
  // The tools' JSON is built once for the whole loop, not on every round.
  const offeredTools = [...offered.values()];
  const toolJson = offeredTools.map((tool) => tool.toTool());

  for (;;) {
    throwIfAborted(signal, agent);
    const tools = limitReached ? [] : offeredTools;
    const messages = [...dialog.toModelMessages(), ...scratch.map(toModelMessage)];
    onEvent?.({ type: "model_call", agent, round, messages: messages.length, tools: tools.map((tool) => tool.name), model: options.model.name, sent: messages });
    const request: ModelRequest = { messages, agent };
    if (tools.length > 0) request.tools = toolJson;
    if (!limitReached && options.hostedTools && options.hostedTools.length > 0) request.hostedTools = options.hostedTools;
    if (options.responseFormat) request.responseFormat = options.responseFormat;
    if (options.modelArgs) request.modelArgs = options.modelArgs;
    if (signal) request.signal = signal;
    if (options.onText) request.onText = options.onText;
    const calledAt = performance.now();
    const response = await options.model.generate(request);
    const latencyMs = performance.now() - calledAt;
    usage.promptTokens += response.usage.promptTokens;
    usage.completionTokens += response.usage.completionTokens;
    usage.llmCalls += 1;
    const text = response.message.content ?? "";
    onEvent?.({ type: "model_reply", agent, round, text, toolCalls: response.toolCalls, usage: response.usage, model: response.model ?? options.model.name, latencyMs, ...(response.finishReason !== undefined ? { finishReason: response.finishReason } : {}), ...(response.carry ? { carry: response.carry } : {}), sent: messages });

    if (response.toolCalls.length > 0) {
      if (limitReached) {
        // Told to stop and offered no tools, the model still asks for one: the round budget is spent (exit 3).
        // The names are the model's: each on one line (see UnknownToolError), or a line break in one forges a line.
        throw new BudgetError("tool_rounds_exhausted", `agent \`${agent}\` still called ${response.toolCalls.map((call) => `\`${escapeControlCharacters(call.name, { all: true })}\``).join(", ")} after its limit of ${options.maxRounds} tool-call round${options.maxRounds === 1 ? "" : "s"} was reached`, {
          hint: "Raise `max_interrupt_steps` for this agent (or pass --max-steps N), or make the task smaller.",
        });
      }
      assertToolsOffered({ agent, requests: response.toolCalls, offered, limitReached });
      // The step is accepted: a retry's scratch belongs to the step that failed, as LLLM forks per step.
      scratch = [];
      dialog.add({ role: "tool_call", content: text, name: agent, toolCalls: response.toolCalls, usage: response.usage });
      const roundCalls = await runToolRound({ agent, requests: response.toolCalls, offered, earlier, context, onEvent, budget: options.budget, approve: options.approve, signal });
      for (const call of roundCalls) {
        const media = toolResultMedia(call.result);
        dialog.add({ role: "tool", content: call.resultStr ?? "", name: call.name, toolCallId: call.id, ...(call.error ? { isError: true } : {}), ...(media.length > 0 ? { media } : {}) });
      }
      calls.push(...roundCalls);
      interrupts.set(round, [roundCalls]);
      round += 1;
      if (round >= options.maxRounds) {
        dialog.add({ role: "user", content: ROUND_LIMIT_TEXT, name: "user" });
        limitReached = true;
      }
      continue;
    }

    assertComplete(agent, response.finishReason, response.refusal);
    const message: Message = { role: "assistant", content: text, name: agent, usage: response.usage };
    let result: { parsed: unknown } | undefined;
    try {
      result = await parseReply(text, { agent, prompt: options.turnPrompt, responseFormat: options.responseFormat });
    } catch (error) {
      if (!isParseError(error)) throw error;
      if (retries >= options.maxExceptionRetry) throw parseFailed(agent, options.turnPrompt, retries, error);
      retries += 1;
      onEvent?.({ type: "parse_retry", agent, attempt: retries, message: error.message });
      // A message that ends its own sentence (Step 16's "... when you are done.") gets no second period.
      scratch.push(message, { role: "user", content: `Error: ${error.message}${/[.!?]$/.test(error.message) ? "" : "."} Please fix.`, name: "user" });
      continue;
    }
    if (result) message.parsed = result.parsed;
    dialog.add(message);
    return { message, interrupts, calls, usage, durationMs: performance.now() - started };
  }
}

/**
 * A final answer that the provider cut off (its output token limit) or withheld (its content filter, or the model's
 * refusal: OpenAI's `refusal`, Anthropic's `stop_reason: refusal`, Gemini's `SAFETY` all arrive as `content_filter`)
 * is not an answer: printing the part that came would be a silent success with a wrong answer. A refusal is the
 * model's answer to this request, so it is neither retried nor sent to a fallback model: the run fails (exit 1).
 */
function assertComplete(agent: string, finishReason: string | undefined, refusal: string | undefined): void {
  if (finishReason === "length") {
    throw new BudgetError("answer_truncated", `agent \`${agent}\`'s answer was cut off at the model's output token limit (finish_reason: length)`, {
      hint: "Raise `max_tokens` in the agent's `model_args` (or `global.model_args`), or ask for a shorter answer.",
    });
  }
  if (finishReason === "content_filter" && refusal !== undefined) {
    throw new ModelBehaviorError("answer_filtered", `agent \`${agent}\`'s model refused to answer: ${JSON.stringify(refusal.length > 300 ? `${refusal.slice(0, 300)}…` : refusal)}`, {
      hint: "Rephrase the prompt or the input; a refusal is the model's answer, so the same request is not sent again.",
    });
  }
  if (finishReason === "content_filter") {
    throw new ModelBehaviorError("answer_filtered", `agent \`${agent}\`'s answer was withheld by the provider's content filter (finish_reason: content_filter)`, {
      hint: "Rephrase the prompt or the input; the provider did not say more.",
    });
  }
}

function parseFailed(agent: string, prompt: Prompt | undefined, retries: number, error: Error): ModelBehaviorError {
  const what = prompt?.parser ? `the reply to prompt \`${prompt.path}\`` : "the JSON reply";
  const tries = retries === 1 ? "1 retry" : `${retries} retries`;
  return new ModelBehaviorError("parse_failed", `agent \`${agent}\`: ${what} still did not parse after ${tries}: ${error.message}`, {
    hint: "Say in the prompt exactly what shape the reply must have, or raise max_exception_retry.",
    cause: error,
  });
}

/** Stop before the next model call once the run is cancelled; an LllmError reason (a time budget) is kept. */
function throwIfAborted(signal: AbortSignal | undefined, agent: string): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof LllmError) throw reason;
  throw new InterruptedError("interrupted", `agent \`${agent}\` was interrupted`, { cause: reason });
}
