import type { ModelCallRecord, RunAttempt, RunRecord, StoredMessage, ToolCallStoredRecord } from "./RunRecord.js";
import { formatCost } from "./RunTally.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { plural } from "../util/plural.js";

export interface TranscriptStyle {
  /** Headings (bold/cyan on a terminal); identity by default. */
  heading?: (text: string) => string;
  dim?: (text: string) => string;
}

type Step = { kind: "model"; at: number; order: number; call: ModelCallRecord } | { kind: "tool"; at: number; order: number; call: ToolCallStoredRecord } | { kind: "resume"; at: number; order: number; attempt: RunAttempt };

/**
 * A run as a person reads it: the header (tactic, status, tokens, cost), the system prompt and input, then each
 * model call (the messages new since the previous call, the reply, tokens, cost, latency) and each tool call (its
 * arguments, result and duration) in the order they happened, and the outcome.
 */
export function formatTranscript(run: RunRecord, style: TranscriptStyle = {}): string {
  const heading = style.heading ?? ((text: string) => text);
  const dim = style.dim ?? ((text: string) => text);
  const lines: string[] = [];
  lines.push(heading(`run ${run.id} · ${run.tactic_name ?? "?"} · ${run.status}${run.exit_code !== null ? ` (exit ${run.exit_code})` : ""}`));
  lines.push(dim(`started ${formatTime(run.started_at)} · ${formatDuration(run.duration_ms)} · lllm ${run.lllm_version ?? "?"} · config ${run.config_digest ?? "?"}`));
  lines.push(dim(`tactic ${run.tactic_path ?? "?"}`));
  lines.push(dim(`models ${run.models.join(", ") || "-"} · ${plural(run.llm_calls, "call")} · ${tokens(run)} · cost ${formatCost(run.cost)}`));
  if (run.continues_run) lines.push(dim(`continues run ${run.continues_run}`));
  if (run.served) lines.push(dim(servedLine(run.served)));
  if (run.attempts.length > 0) lines.push(dim(`resumed ${run.attempts.length === 1 ? "once" : `${run.attempts.length} times`} (lllm run --resume)`));
  if (Object.keys(run.vars).length > 0) lines.push(dim(`vars ${Object.entries(run.vars).map(([key, value]) => `${key}=${value}`).join(" ")}`));
  lines.push(...spendLines(run.details?.spend).map(dim));

  const steps: Step[] = [
    ...run.model_calls.map((call): Step => ({ kind: "model", at: call.started_at, order: call.step, call })),
    ...run.tool_calls.map((call): Step => ({ kind: "tool", at: call.ended_at - (call.duration_ms ?? 0), order: call.step, call })),
    // Where each later attempt began: the steps before it were replayed from the journal, those after ran live.
    ...run.attempts.map((attempt): Step => ({ kind: "resume", at: attempt.started_at, order: attempt.step - 0.5, attempt })),
  ].sort((a, b) => a.order - b.order);

  // A tool_chain script is shown under the call that ran it; the rest (a code-action run's programs) after the steps.
  const { byCall: chainPrograms, unmatched: otherChainPrograms } = toolChainPrograms(run.tool_calls, asProgramList(run.details?.tool_chains) ?? []);
  const seen = new Map<string, readonly StoredMessage[]>();
  for (const step of steps) {
    lines.push("");
    if (step.kind === "resume") {
      lines.push(heading(`── resumed here · attempt ${step.attempt.attempt} · ${formatTime(step.attempt.started_at)}`) + dim(" · the steps above were replayed from the journal"));
    } else if (step.kind === "model") {
      const { call } = step;
      lines.push(heading(`── model call ${call.seq + 1} · ${call.agent} · round ${call.round + 1} · ${call.model ?? "?"}`) + dim(` · ${formatDuration(call.latency_ms)} · ${tokens(call)} · ${formatCost(call.cost)}`));
      for (const retry of call.retries ?? []) lines.push(dim(`  [retry] attempt ${retry.attempt} failed (${retry.cause}); tried again after ${formatDuration(retry.wait_ms)}`));
      // Only what is new since this agent's previous call: the messages both start with were shown there (the kept
      // ones are the same objects; a resumed attempt's first live call stores its whole dialog anew, equal to the
      // last one's; two copies of one agent at once share only their start).
      const previous = seen.get(call.agent) ?? [];
      let from = 0;
      while (from < previous.length && from < call.messages.length && sameMessage(previous[from]!, call.messages[from]!)) from += 1;
      for (const message of call.messages.slice(from)) {
        if (message.role === "assistant" || message.role === "tool") continue;
        lines.push(`  [${message.role}] ${indent(message.content ?? "")}`);
        // A user's images are kept as notes (the store keeps no image data).
        for (const note of message.media ?? []) lines.push(`  [${message.role}] ${note}`);
      }
      seen.set(call.agent, call.messages);
      if (call.reply) lines.push(`  [reply] ${indent(call.reply)}`);
      // The model wrote the name and the arguments' text (raw, not always JSON): a line break in them must not start
      // a line of the transcript's own (`── tool …`), so the name is kept on its line and the arguments indented.
      for (const request of call.tool_calls) lines.push(`  [asks] ${escapeControlCharacters(request.name, { all: true })}(${indent(request.arguments)})`);
    } else {
      const { call } = step;
      lines.push(heading(`── tool ${call.name}`) + dim(` · ${call.agent} · ${call.status} · ${formatDuration(call.duration_ms)}`));
      lines.push(`  arguments ${JSON.stringify(call.arguments)}`);
      lines.push(`  ${call.error !== null ? `error ${indent(call.error)}` : `result ${indent(call.result ?? "")}`}`);
      const program = chainPrograms.get(call);
      if (program) lines.push(heading("  ── program") + dim(` · ${programSummary(program)}`), ...programBody(program, "    "));
    }
  }
  const programs = [...(asProgramList((run.details?.code_action as { programs?: unknown } | undefined)?.programs) ?? []), ...otherChainPrograms];
  for (const program of programs) {
    lines.push("", heading(`── program${program.attempt !== undefined ? ` (attempt ${program.attempt})` : ""}`) + dim(` · ${programSummary(program)}`));
    lines.push(...programBody(program, "  "));
  }
  for (const artifact of (run.details?.artifacts ?? []) as Array<{ ref?: string; size?: number; mime?: string; path?: string }>) {
    lines.push(dim(`artifact ${artifact.ref ?? "?"} · ${artifact.mime ?? "?"} · ${artifact.size ?? "?"} bytes · ${artifact.path ?? ""}`));
  }
  lines.push("");
  if (run.error_message !== null) lines.push(heading(`error (${run.error_code ?? "?"})`), run.error_message);
  else if (run.status === "ok") lines.push(heading("output"), typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2));
  else lines.push(heading(run.status === "running" ? "still running" : run.status === "crashed" ? "crashed: the process ended without recording an outcome" : run.status));
  if (run.resumable) lines.push(dim(`It stopped before its end; go on from where it stopped with: lllm run --resume ${run.id}`));
  return lines.join("\n");
}

interface ProgramLike {
  attempt?: number;
  status?: string;
  tool_calls?: number;
  duration_ms?: number;
  code?: string;
  error?: string | null;
}

function asProgramList(value: unknown): ProgramLike[] | undefined {
  return Array.isArray(value) ? (value as ProgramLike[]) : undefined;
}

function programSummary(program: ProgramLike): string {
  return `${program.status ?? "?"} · ${plural(program.tool_calls ?? 0, "bridged call")} · ${formatDuration(program.duration_ms ?? null)}`;
}

/** A program's code, every line at `pad`, then its error (its later lines two further in, as elsewhere). */
function programBody(program: ProgramLike, pad: string): string[] {
  // Blank lines keep the indent too: the block stays one block.
  const lines = (program.code ?? "").trimEnd().split("\n").map((line) => `${pad}${line}`);
  if (program.error) lines.push(`${pad}error ${program.error.replace(/\n/g, `\n${pad}  `)}`);
  return lines;
}

/**
 * Which tool_chain call ran which script: the run keeps the scripts in the order they ended and each call's arguments
 * apart, so a script goes with the call whose `code` it is (the first such call not yet taken); a script with no
 * such call (its arguments not kept as sent) goes with the next call that ran one, in order. A call not run again
 * (`repeated`) or refused has no script; scripts left over are shown after the steps.
 */
function toolChainPrograms(calls: readonly ToolCallStoredRecord[], programs: readonly ProgramLike[]): { byCall: Map<ToolCallStoredRecord, ProgramLike>; unmatched: ProgramLike[] } {
  const byCall = new Map<ToolCallStoredRecord, ProgramLike>();
  const candidates = calls.filter((call) => call.name === "tool_chain" && (call.status === "ok" || call.status === "error")).sort((a, b) => a.step - b.step);
  const left = [...programs];
  for (const call of candidates) {
    const index = left.findIndex((program) => program.code !== undefined && program.code === call.arguments.code);
    if (index < 0) continue;
    byCall.set(call, left[index]!);
    left.splice(index, 1);
  }
  for (const call of candidates) {
    if (byCall.has(call) || typeof call.arguments.code !== "string" || left.length === 0) continue;
    byCall.set(call, left.shift()!);
  }
  return { byCall, unmatched: left };
}

function indent(text: string): string {
  return text.replace(/\n/g, "\n    ");
}

function tokens(usage: { prompt_tokens: number; completion_tokens: number; cached_prompt_tokens: number; reasoning_tokens: number }): string {
  const extra = [usage.cached_prompt_tokens > 0 ? `${usage.cached_prompt_tokens} cached` : "", usage.reasoning_tokens > 0 ? `${usage.reasoning_tokens} reasoning` : ""].filter(Boolean);
  return `${usage.prompt_tokens}+${usage.completion_tokens} tokens${extra.length > 0 ? ` (${extra.join(", ")})` : ""}`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
}

/** Local time, `2026-11-30 21:45:10`. */
export function formatTime(ms: number): string {
  const date = new Date(ms);
  const pad = (value: number): string => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

interface StoredSpend {
  by_agent?: Record<string, { model_calls?: number; prompt_tokens?: number; completion_tokens?: number; cost?: number | null; tool_calls?: number }>;
  by_tool?: Record<string, { calls?: number; failed?: number; model_calls?: number; cost?: number | null }>;
  limits?: Record<string, number>;
}

/** The run's limits and where its spend went (per agent, per tool), as `run --json` has them in `usage`. */
function spendLines(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  const spend = value as StoredSpend;
  const lines: string[] = [];
  const limits = Object.entries(spend.limits ?? {});
  if (limits.length > 0) lines.push(`limits ${limits.map(([name, limit]) => `${name} ${limit}`).join(" · ")}`);
  for (const [name, agent] of Object.entries(spend.by_agent ?? {})) {
    lines.push(`agent ${name}: ${plural(agent.model_calls ?? 0, "model call")}, ${(agent.prompt_tokens ?? 0) + (agent.completion_tokens ?? 0)} tokens, ${formatCost(agent.cost ?? null)}, ${plural(agent.tool_calls ?? 0, "tool call")}`);
  }
  for (const [name, tool] of Object.entries(spend.by_tool ?? {})) {
    const inside = (tool.model_calls ?? 0) > 0 ? `, ${plural(tool.model_calls ?? 0, "model call")} inside (${formatCost(tool.cost ?? null)})` : "";
    lines.push(`tool ${name}: ${plural(tool.calls ?? 0, "call")}${(tool.failed ?? 0) > 0 ? ` (${tool.failed} failed)` : ""}${inside}`);
  }
  return lines;
}

/** Whether two stored messages are the same: one object (kept from the call before), or equal in every part. */
function sameMessage(a: StoredMessage, b: StoredMessage): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** How a served run was asked for: `served chat.completions as model shop for ann`, `served over MCP (HTTP) as tool shop to inspector/0.1`. */
function servedLine(served: NonNullable<RunRecord["served"]>): string {
  // The client named itself (a request's `user`, an MCP client's name and version): on this one line, so that a line
  // break in it cannot start a line that reads as a step of the run.
  const client = (text: string): string => escapeControlCharacters(text, { all: true });
  if (served.route === "mcp" || served.route === "mcp.stdio") {
    return `served over MCP (${served.route === "mcp" ? "HTTP" : "stdio"}) as tool ${served.model}${served.client?.user_agent !== undefined ? ` to ${client(served.client.user_agent)}` : ""}`;
  }
  return `served ${served.route} as model ${served.model}${served.client?.user !== undefined ? ` for ${client(served.client.user)}` : ""}${served.response_id !== undefined ? ` · ${served.response_id}` : ""}`;
}
