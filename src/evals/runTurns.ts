import type { AgentEvent, Message } from "../agent/index.js";
import type { AgentConfig } from "../config/index.js";
import type { Model, ModelMessage } from "../providers/Model.js";
import { runRecorded } from "../run/runRecorded.js";
import { caseError, type CaseRun, type CaseToolCall } from "./CaseRun.js";
import type { TestCase, TestFile } from "./TestFile.js";

export interface RunTurnsOptions {
  testFile: TestFile;
  testCase: TestCase;
  /** Builds each agent's model (a replay's cassette, a recording wrapper); default: the tactic's own models. */
  createModel?: (config: AgentConfig) => Model;
  /** Told every event of the runs (a recording keeps the tool results). */
  onEvent?: (event: AgentEvent) => void;
  /** `false`: the runs are not recorded in the run store. */
  log?: boolean;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  warn: (message: string) => void;
}

/**
 * Run a case's turns in order, each through `runRecorded` as `lllm run` does (checked, recorded in the run store
 * with the test file and the case's name), each turn continuing the dialog the one before ended with. A turn that
 * fails ends the conversation: the turns after it do not run.
 */
export async function runTurns(options: RunTurnsOptions): Promise<CaseRun[]> {
  const { testFile, testCase } = options;
  const runs: CaseRun[] = [];
  let history: Message[] | undefined;
  let previousRun: string | undefined;
  for (const input of testCase.inputs) {
    const toolCalls: CaseToolCall[] = [];
    const lastSent = new Map<string, ModelMessage[]>();
    let lastReply: { agent: string; text: string } | undefined;
    const started = performance.now();
    const run = await runRecorded(testFile.prepared, {
      input,
      vars: testCase.vars,
      ...(options.createModel ? { createModel: options.createModel } : {}),
      ...(history ? { history } : {}),
      ...(previousRun !== undefined ? { continuesRun: previousRun } : {}),
      ...(options.log !== undefined ? { log: options.log } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.env ? { env: options.env } : {}),
      test: { file: testFile.file, case: testCase.name },
      warn: options.warn,
      missingVariableHint: (name) => `Give it under \`vars:\` in the test file (for every case, or the case's own).`,
      onEvent: (event) => {
        if (event.type === "tool_call") toolCalls.push({ agent: event.agent, name: event.call.name, arguments: event.call.arguments ?? {}, result: event.call.resultStr ?? null, error: event.call.error ?? null });
        else if (event.type === "model_call" && event.sent) lastSent.set(event.agent, event.sent.slice());
        else if (event.type === "model_reply") lastReply = { agent: event.agent, text: event.text };
        options.onEvent?.(event);
      },
    });
    const usage = { promptTokens: run.usage.promptTokens, completionTokens: run.usage.completionTokens, totalTokens: run.usage.totalTokens, llmCalls: run.usage.llmCalls };
    runs.push({
      input,
      output: run.ok ? run.result.output : null,
      toolCalls,
      usage,
      cost: run.cost,
      durationMs: Math.round(performance.now() - started),
      error: run.ok ? null : caseError(run.error),
      runId: run.runId ?? null,
    });
    if (!run.ok) break;
    history = lastReply ? dialogAfter(lastSent.get(lastReply.agent) ?? [], lastReply) : undefined;
    previousRun = run.runId;
  }
  return runs;
}

/** The dialog a turn ended with, to continue it: what its answering agent was last sent (without the system prompt), then its answer. */
function dialogAfter(sent: readonly ModelMessage[], reply: { agent: string; text: string }): Message[] {
  const messages: Message[] = [];
  for (const message of sent) {
    if (message.role === "user") messages.push({ role: "user", content: message.content, name: "user" });
    else if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) messages.push({ role: "tool_call", content: message.content ?? "", name: reply.agent, toolCalls: message.toolCalls });
    else if (message.role === "assistant") messages.push({ role: "assistant", content: message.content ?? "", name: reply.agent });
    else if (message.role === "tool") messages.push({ role: "tool", content: message.content, name: message.name ?? "tool", toolCallId: message.toolCallId, ...(message.isError ? { isError: true } : {}) });
  }
  messages.push({ role: "assistant", content: reply.text, name: reply.agent });
  return messages;
}
