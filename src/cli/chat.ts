import { oneLine, parseCount } from "./runChatShared.js";
import { mcpClientHooks } from "./mcpClientHooks.js";
import path from "node:path";
import type { AgentEvent } from "../agent/index.js";
import { approveAll, approveNone, noticeFirstRefusal } from "../approval/index.js";
import { lllmHome } from "../config/lllmHome.js";
import { InterruptedError, isLllmError } from "../errors.js";
import { StreamRedactor } from "../util/StreamRedactor.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { ChatInput } from "./ChatInput.js";
import { ChatSession } from "./ChatSession.js";
import { parseSlashCommand, runSlashCommand } from "./chatCommands.js";
import { stopSignal, takeInterrupts } from "./handleSignals.js";
import { failureJson, paint, reportError, SCHEMA_VERSION, warn, writeErr, writeOut } from "./output.js";
import { recordedRunJson, recordedUsageJson } from "../run/recordedRunJson.js";
import type { RecordedRun } from "../run/runRecorded.js";
import { escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import { parseVars } from "./parseVars.js";
import { retryReporter } from "./retryReporter.js";
import { StreamedLine } from "./StreamedLine.js";
import { terminalText } from "../util/terminalText.js";

export interface ChatCommandOptions {
  agent?: string;
  model?: string;
  package?: string[];
  var?: string[];
  maxSteps?: string;
  approve?: "all" | "none";
  /** `--no-log` sets it false. */
  log?: boolean;
  continue?: string | boolean;
  verbose?: boolean;
  /** One JSON line per turn on stdout instead of the answer's text. */
  json?: boolean;
}

/** Where the inputs typed in `lllm chat` are kept between sessions. */
export function chatHistoryFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(lllmHome(env), "chat_history");
}

/**
 * `lllm chat [TACTIC]`: a conversation with one agent, turn by turn. On a terminal: a prompt, line editing and
 * history, answers streamed, Ctrl-C cancels the answer (its tools and programs stop) and the session goes on.
 * Otherwise each line of stdin is a turn and stdout carries the answers alone, so a script can drive it; with
 * `--json`, one JSON line per turn, so that a script can tell where an answer of several lines ends.
 */
export async function chatCommand(target: string | undefined, options: ChatCommandOptions): Promise<void> {
  const terminal = Boolean(process.stdin.isTTY && process.stderr.isTTY);
  const continued = options.continue !== undefined && options.continue !== false ? await (await import("./continueRun.js")).findContinuedRun(target, options.continue) : undefined;
  const session = await ChatSession.start({
    target: continued?.target ?? target,
    agent: options.agent,
    model: options.model ?? continued?.model,
    packages: options.package,
    vars: parseVars(options.var ?? []),
    maxSteps: options.maxSteps === undefined ? undefined : parseCount(options.maxSteps),
    log: options.log,
    // A question on the terminal would fight the chat's own prompt for the keyboard: approval is a flag here.
    approve: options.approve === "all" ? approveAll : options.approve === "none" ? approveNone : noticeFirstRefusal(approveNone, () => warn("a tool that needs approval was refused: lllm chat does not ask (its prompt has the keyboard); start it with --approve all to run such tools")),
    // As for `lllm run` (progress, logs, sign-in), but a server's question is declined: readline has the keyboard.
    mcpHooks: mcpClientHooks({ verbose: Boolean(options.verbose), signal: stopSignal(), ask: false }),
    history: continued?.history,
    continuesRun: continued?.id,
  });
  if (terminal) {
    const resumed = continued ? ` · continuing run ${continued.id}` : "";
    writeErr(paint("dim", `lllm chat · ${session.tacticName} · agent ${session.agent} · ${session.model}${resumed}\n/help for commands, Ctrl-C cancels an answer, Ctrl-D or /exit ends`));
  }

  let answering: AbortController | undefined;
  const cancel = (): void => answering?.abort(new InterruptedError("interrupted", "answer cancelled", { exitCode: 130 }));
  const input = new ChatInput({
    terminal,
    historyFile: chatHistoryFile(),
    onInterrupt: () => {
      if (answering) cancel();
      else {
        input.clearLine();
      }
    },
  });
  // A SIGINT (not a terminal's Ctrl-C, which readline reads as a key): cancel the answer; between answers, end.
  const release = takeInterrupts(() => {
    if (answering) cancel();
    else {
      process.exitCode = 130;
      input.close();
    }
  });
  const stopped = stopSignal();
  const onStop = (): void => input.close();
  stopped.addEventListener("abort", onStop);
  let failure: number | undefined;
  try {
    for (;;) {
      const text = await input.next();
      if (text === undefined || stopped.aborted) break;
      if (text.trim() === "") continue;
      const command = text.startsWith("//") ? undefined : parseSlashCommand(text);
      if (command) {
        try {
          if ((await runSlashCommand(command, session)) === "exit") break;
        } catch (error) {
          // A bad /model or an unwritable /save file: said, and the session goes on (a script learns it at the end).
          const code = reportError(error, Boolean(options.verbose));
          failure ??= code;
        }
        continue;
      }
      answering = new AbortController();
      const code = await answer(session, text.startsWith("//") ? text.slice(1) : text, AbortSignal.any([answering.signal, stopped]), { verbose: Boolean(options.verbose), terminal, json: Boolean(options.json) });
      answering = undefined;
      if (stopped.aborted) break;
      if (code !== 0) failure ??= code;
    }
  } finally {
    release();
    stopped.removeEventListener("abort", onStop);
    input.close();
  }
  if (terminal) writeErr("");
  // A script learns that a turn failed (a run never exits 0 without its answers); a person saw it already.
  else if (failure !== undefined && process.exitCode === undefined) process.exitCode = failure;
}

/**
 * One turn: stream the answer to stdout (with `json`, one JSON line once the turn ends, a failed turn's too), a dim
 * line per tool call on stderr; the exit code of the turn.
 */
async function answer(session: ChatSession, text: string, signal: AbortSignal, options: { verbose: boolean; terminal: boolean; json: boolean }): Promise<number> {
  const { verbose, terminal, json } = options;
  const line = new StreamedLine();
  const redactor = new StreamRedactor();
  let written = "";
  const show = (piece: string): void => {
    if (piece === "") return;
    written += piece;
    writeOwnStdout(line.text(piece));
  };
  const run = await session.turn(text, {
    signal,
    onModelRetry: retryReporter(verbose),
    ...(json ? {} : { onText: (delta: string) => show(redactor.push(delta)) }),
    onEvent: (event) => {
      // A reply's text is whole: what the redactor held back (its last word) is shown before the lines that follow it.
      if (event.type === "model_reply") show(redactor.flush());
      const note = eventLine(event, verbose);
      if (note === undefined) return;
      process.stderr.write(line.breakForLog());
      writeErr(note);
    },
  });
  show(redactor.flush());
  if (json) writeOut(escapeJsonControlCharacters(JSON.stringify(turnJson(run))));
  if (run.ok) {
    if (json) return 0;
    // Structured or unstreamed output (a tactic's own answer): written whole.
    if (written === "") show(typeof run.result.output === "string" ? run.result.output : JSON.stringify(run.result.output, null, 2));
    if (!written.endsWith("\n")) writeOwnStdout("\n");
    return 0;
  }
  if (!json && written !== "" && !written.endsWith("\n")) writeOwnStdout("\n");
  if (run.error instanceof InterruptedError && signal.aborted && !stopSignal().aborted) {
    writeErr(paint("dim", terminal ? "(answer cancelled; the conversation goes on)" : "lllm: answer cancelled"));
    return 130;
  }
  const code = reportError(run.error, verbose);
  if (terminal) writeErr(paint("dim", "The turn failed; the conversation goes on without it."));
  return isLllmError(run.error) ? code : 1;
}

/** A tool call as one dim line (its arguments with --verbose); warnings always; model rounds with --verbose. */
function eventLine(event: AgentEvent, verbose: boolean): string | undefined {
  if (event.type === "warning") return `${paint("yellow", "lllm: warning:")} [${event.agent}] ${terminalText(event.message)}`;
  if (event.type === "tool_call") {
    const args = verbose ? ` ${oneLine(JSON.stringify(event.call.arguments), 160)}` : "";
    const failed = event.call.error !== undefined ? ` ${paint("red", `failed: ${oneLine(event.call.error, 160)}`)}` : "";
    return `${paint("dim", `  ↳ ${terminalText(event.call.name)}${args} (${Math.round(event.durationMs)} ms)`)}${failed}`;
  }
  if (verbose && event.type === "model_reply") return paint("dim", `  [${event.agent}] model reply, ${event.usage.promptTokens}+${event.usage.completionTokens} tokens`);
  return undefined;
}

/**
 * A turn as `--json` prints it, on one line: what `lllm run --json` prints for a run, or for a failed turn the
 * failure object with what the turn spent (its answer is not part of the conversation).
 */
function turnJson(run: RecordedRun): Record<string, unknown> {
  if (run.ok) return { schema_version: SCHEMA_VERSION, ...recordedRunJson(run) };
  return { ...failureJson(run.error), output: null, usage: recordedUsageJson(run), cost: run.cost, ...(run.runId !== undefined ? { run_id: run.runId } : {}) };
}
