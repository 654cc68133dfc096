import { oneLine, parseCount } from "./runChatShared.js";
import { mcpClientHooks } from "./mcpClientHooks.js";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { AgentEvent } from "../agent/index.js";
import { ConfigError, isLllmError, RunLimitError } from "../errors.js";
import { replaysToSameEnd } from "../store/journal/endingAnswer.js";
import { warnUnknownModels } from "./models.js";
import { modelLocation } from "../tactics/modelLocation.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { templatePlaceholders } from "../prompts/index.js";
import { approveAll, approveNone, askOnTerminal, noticeFirstRefusal, type ApprovalPolicy } from "../approval/index.js";
import { hasLimits, limitsJson, type RunLimits } from "../limits/index.js";
import { fallbackMessage } from "../providers/FallbackModel.js";
import { stopSignal } from "./handleSignals.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { retryReporter } from "./retryReporter.js";
import { StreamRedactor } from "../util/StreamRedactor.js";
import { warnBrokenFiles } from "./loadRegistry.js";
import { StreamedLine } from "./StreamedLine.js";
import { toolFailureText } from "./toolFailureText.js";
import { addFailureDetails, paint, SCHEMA_VERSION, setRunningDetails, warn, writeAnswer, writeErr, writeOut } from "./output.js";
import { terminalText } from "../util/terminalText.js";
import { runRecorded } from "../run/runRecorded.js";
import { recordedRunJson, recordedUsageJson, resumedJson } from "../run/recordedRunJson.js";
import { runSetup } from "../store/journal/runSetup.js";
import type { ResumeFlags } from "../store/SpoolEntry.js";
import { runUsageJson } from "../tactics/tacticResultJson.js";
import { codeActionReportJson } from "../codeaction/CodeActionReport.js";
import { UsageCounter } from "../tactics/UsageCounter.js";
import { parseVars, warnMisspeltVars } from "./parseVars.js";
import { isRemoteSource } from "../config/packageSource.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { plural } from "../util/plural.js";

export interface RunCommandOptions {
  input?: string;
  inputFile?: string;
  var?: string[];
  model?: string;
  maxSteps?: string;
  json?: boolean;
  stream?: boolean;
  dryRun?: boolean;
  approve?: "all" | "none";
  notebookOut?: string;
  package?: string[];
  verbose?: boolean;
  timeout?: string;
  /** `--no-log` sets it false. */
  log?: boolean;
  /** `--continue [id]`: `true` for the last run. */
  continue?: string | boolean;
  /** `--resume [id]`: `true` for the last interrupted or crashed run started here. */
  resume?: string | boolean;
  /** `--force`: resume a run whose tactic changed since. */
  force?: boolean;
  /** `--rerun-unknown`: a resumed run runs again the calls its stop cut short, whatever their tools say. */
  rerunUnknown?: boolean;
  maxCost?: string;
  maxTokens?: string;
  maxToolCalls?: string;
  maxDuration?: string;
}

/** `lllm run <tactic | pkg.tactics:name>`: run a tactic and print the answer (stdout) and progress (stderr). */
export async function runCommand(tacticTarget: string | undefined, options: RunCommandOptions): Promise<void> {
  const resuming = options.resume !== undefined && options.resume !== false;
  if (resuming) checkResumeFlags(options);
  else if (options.force || options.rerunUnknown) throw new ConfigError("usage", `${options.force ? "--force" : "--rerun-unknown"} goes with --resume`, { location: { file: options.force ? "--force" : "--rerun-unknown" }, hint: "lllm run --resume [ID] --force" });
  // Loaded only to resume: a plain run does not read the run store.
  const resumeModule = resuming ? await import("./resumeRun.js") : undefined;
  const resumed = resumeModule ? await resumeModule.findResumedRun(tacticTarget, options.resume as string | true, { force: Boolean(options.force) }) : undefined;
  const continued = options.continue !== undefined && options.continue !== false ? await (await import("./continueRun.js")).findContinuedRun(tacticTarget, options.continue) : undefined;
  const target = resumed?.target ?? continued?.target ?? tacticTarget;
  if (target === undefined) throw new ConfigError("usage_missing_tactic", "missing the tactic to run", { hint: 'lllm run TACTIC --input "…" (or --continue to go on with the last run)' });
  const limits = parseLimitFlags(options);
  const modelTimeoutFlag = options.timeout === undefined ? undefined : parseSeconds(options.timeout);
  // A resumed run runs as it ran: its model override, packages and step cap; limits and timeout given now go over its own.
  const flags: ResumeFlags = resumed && resumeModule
    ? resumeModule.resumeFlags(resumed.info.flags, { limits, modelTimeout: modelTimeoutFlag, maxSteps: options.maxSteps === undefined ? undefined : parseCount(options.maxSteps) })
    : {
        // Continuing lllm chat's plain assistant: the model it asked (its tactic names none).
        ...((options.model ?? continued?.model) ? { model: options.model ?? continued?.model } : {}),
        ...(options.package ? { packages: options.package.map(resumablePackage) } : {}),
        ...(options.maxSteps !== undefined ? { maxSteps: parseCount(options.maxSteps) } : {}),
        ...(modelTimeoutFlag !== undefined ? { modelTimeout: modelTimeoutFlag } : {}),
        ...(hasLimits(limits) ? { limits } : {}),
        ...(options.notebookOut !== undefined ? { notebookOut: path.resolve(options.notebookOut) } : {}),
      };
  const model = options.model ?? flags.model;
  const packages = flags.packages ?? options.package;
  const file = await resolveTacticTarget(target, packages);
  const prepared = await prepareTactic(file, { ...(model ? { model } : {}), ...(packages ? { packages } : {}) });
  warnBrokenFiles(prepared.registry);
  warnUnknownModels(prepared.agents, prepared.settings.prices ?? {}, warn, { locate: (agent, position) => modelLocation(prepared.tactic, model, agent, position) });
  let rerunUnknown: ((call: { key: string }) => boolean) | undefined;
  if (resumed && resumeModule) {
    resumeModule.checkSetup(resumed.record.id, resumed.info, runSetup(prepared), Boolean(options.force));
    const allowed = await resumeModule.decideUnfinished(resumed.journal, { rerunUnknown: Boolean(options.rerunUnknown), interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY) });
    rerunUnknown = (call) => allowed.has(call.key);
    const again = resumed.journal.askedAgain;
    writeErr(paint("dim", `lllm: resuming run ${resumed.record.id} (attempt ${resumed.journal.attempt}): its recorded steps are replayed, then it goes on live${again ? `, asking agent \`${again.agent}\` again for the answer that ended it` : ""}`));
  }
  const input = resumed ? (resumed.record.input ?? "") : readInput(options, prepared.tactic.config.prompt, prepared.tactic.config.steps?.map((step) => step.prompt ?? "{input}"));
  const vars = resumed ? resumed.record.vars : parseVars(options.var ?? []);
  if (!resumed) warnMisspeltVars(prepared, vars, warn);
  const maxSteps = flags.maxSteps;
  const modelTimeout = flags.modelTimeout;
  const runLimits: RunLimits = flags.limits ?? {};
  const notebookOut = flags.notebookOut ?? options.notebookOut;

  const scripted = [...new Set(prepared.agents.map((agent) => agent.config.model_name).filter((name): name is string => typeof name === "string" && name.startsWith("scripted:")))];
  for (const name of scripted.filter((entry) => existsSync(path.resolve(entry.slice("scripted:".length))))) writeErr(paint("dim", `lllm: replaying the model's turns from ${name.slice("scripted:".length)} (a scripted model: no API key, no network)`));

  const stream = options.stream ?? Boolean(process.stdout.isTTY);
  let streamed = false;
  const line = new StreamedLine();
  // A key that a tool echoed and the model repeated is redacted in the stream too, even split across pieces.
  const redactor = new StreamRedactor();
  const show = (text: string): void => {
    if (text === "") return;
    writeOwnStdout(line.text(text));
  };
  const onText = stream && !options.json && !options.dryRun
    ? (delta: string): void => {
        streamed = true;
        show(redactor.push(delta));
      }
    : undefined;

  // Counted as the run goes, so that a run stopped from outside (a tool that never settles) can still say what it spent.
  const usage = new UsageCounter();
  setRunningDetails(() => ({ output: null, usage: runUsageJson(usage.toReport()) }));
  if (continued && (prepared.tactic.config.tactic_type ?? "agent") !== "agent") {
    throw new ConfigError("usage_continue_pattern", `--continue works with the agent pattern; this tactic's tactic_type is \`${prepared.tactic.config.tactic_type}\``, { location: { file: "--continue" } });
  }
  const signal = stopSignal();
  // Ctrl-C and SIGTERM say at once how to go on with the run (the clean-up after them may take the grace period).
  let recordedId: string | undefined;
  signal.addEventListener("abort", () => {
    if (recordedId !== undefined) writeErr(`lllm: run ${recordedId} stopped before its end; resume it with: lllm run --resume ${recordedId}`);
  }, { once: true });
  const reportRetry = retryReporter(Boolean(options.verbose));
  // Said once per switch: the chain stays with the model that answered.
  const fallbacksSaid = new Set<string>();
  // The run store listens to the events; a dry run calls nothing and is not a run.
  const run = await runRecorded(prepared, {
    input,
    vars,
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(modelTimeout !== undefined ? { modelTimeout } : {}),
    ...(hasLimits(runLimits) ? { limits: runLimits } : {}),
    onModelRetry: reportRetry,
    onModelFallback: (notice) => {
      const key = `${notice.from}\u0000${notice.to}`;
      if (fallbacksSaid.has(key)) return;
      fallbacksSaid.add(key);
      process.stderr.write(line.breakForLog());
      warn(fallbackMessage(notice));
    },
    signal,
    ...(onText ? { onText } : {}),
    onEvent: (event) => {
      // A reply's text is whole: what the redactor held back (its last word) is shown before the lines that follow it.
      if (onText && event.type === "model_reply") show(redactor.flush());
      if (options.verbose || event.type === "warning" || event.type === "program_repair") process.stderr.write(line.breakForLog());
      reportEvent(event, Boolean(options.verbose));
    },
    ...(options.dryRun ? { dryRun: true } : {}),
    approve: approvalPolicy(options.approve, () => process.stderr.write(line.breakForLog()), () => {
      process.stderr.write(line.breakForLog());
      warn("a tool that needs approval was refused: nobody can be asked here (stdin or stderr is not a terminal); pass --approve all to run such tools, or --approve none to refuse them without this warning");
    }),
    mcpHooks: mcpClientHooks({ verbose: Boolean(options.verbose), signal }),
    ...(notebookOut !== undefined ? { notebookOut } : {}),
    ...(continued ? { history: continued.history, continuesRun: continued.id } : {}),
    ...(resumed?.history ? { history: resumed.history } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(resumed ? { resume: resumed.journal, ...(rerunUnknown ? { rerunUnknown } : {}) } : { flags }),
    onRecorded: (id) => (recordedId = id),
    warn,
    usage,
  });
  if (!run.ok) {
    // What was streamed before the failure is shown (the error says it is only part of the answer).
    if (streamed) show(redactor.flush());
    // A failed code-action run still has a report (attempts, programs, the error): with --json it is data too.
    addFailureDetails(run.error, {
      output: null,
      usage: run.spend ? recordedUsageJson(run) : runUsageJson(usage.toReport()),
      cost: run.cost,
      ...(run.limits ? { limits: limitsJson(run.limits) } : {}),
      ...(run.error instanceof RunLimitError ? { limit: { name: run.error.limit, value: run.error.value, spent: run.error.spent } } : {}),
      ...(run.runId !== undefined ? { run_id: run.runId } : {}),
      ...(run.codeAction !== undefined ? { code_action: codeActionReportJson(run.codeAction) } : {}),
      ...resumedJson(run),
    });
    // A run stopped before its end goes on from where it stopped: say how (not for a mistake in the files or flags,
    // nor for a recorded model that no longer fits the run: resumed, it would diverge again; nor for a run refused
    // before its first model call, a sandbox missing: nothing was spent, and running it again is the same; nor for
    // what the model did, see replaysToSameEnd). `lllm logs` marks runs by the same rule (isResumable).
    if (resumed && run.runId !== undefined && !signal.aborted && isLllmError(run.error) && run.error.exitCode === 2) {
      // The attempt's mistake (a key not set in this shell, a script path from another folder), not the run's.
      writeErr(`lllm: run ${run.runId} can still go on once that is fixed: lllm run --resume ${run.runId}`);
    } else if (run.runId !== undefined && !signal.aborted && (resumed !== undefined || usage.llmCalls > 0) && !(isLllmError(run.error) && (run.error.exitCode === 2 || replaysToSameEnd(run.error.code)))) {
      const raise = run.error instanceof RunLimitError ? ` --${run.error.limit.replaceAll("_", "-")} <higher>` : "";
      writeErr(`lllm: run ${run.runId} stopped before its end; resume it with: lllm run --resume ${run.runId}${raise}`);
    }
    throw run.error;
  }
  const { result } = run;
  if (result.dryRunRequest) {
    // Bare, the body is what the provider would get (ready for `curl -d @-`); with --json it is wrapped like every
    // other --json output, so that a script can check the version and tell it from a run's result.
    const printed = options.json ? { schema_version: SCHEMA_VERSION, dry_run: true, request: result.dryRunRequest } : result.dryRunRequest;
    writeOut(JSON.stringify(printed, null, 2));
    return;
  }
  if (options.verbose) writeErr(paint("dim", `lllm: ${run.summary}${run.runId !== undefined ? ` · run ${run.runId}` : ""}`));
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, ...recordedRunJson(run) }, null, 2));
  } else if (streamed) {
    show(redactor.flush());
    writeOwnStdout(line.end());
  } else {
    writeAnswer(typeof result.output === "string" ? result.output : JSON.stringify(result.output, null, 2));
  }
}

/** `--resume` runs the run again with its own input and vars, and cannot go with a dialog of its own or a dry run. */
function checkResumeFlags(options: RunCommandOptions): void {
  const clash = [
    options.input !== undefined ? "--input" : undefined,
    options.inputFile !== undefined ? "--input-file" : undefined,
    options.var !== undefined && options.var.length > 0 ? "--var" : undefined,
    options.continue !== undefined && options.continue !== false ? "--continue" : undefined,
    options.dryRun ? "--dry-run" : undefined,
    options.log === false ? "--no-log" : undefined,
  ].find((flag) => flag !== undefined);
  if (clash) throw new ConfigError("usage", `--resume goes on with the run's own input, vars and record: it cannot go with ${clash}`, { location: { file: clash }, hint: "lllm run --resume [ID] (limits and --timeout may be given anew)" });
}

/**
 * `--approve` decides; without it a person at a terminal is asked, and with nobody to ask nothing is approved (and
 * stderr says so at the first refusal).
 */
function approvalPolicy(approve: "all" | "none" | undefined, beforeQuestion: () => void, onRefusedByDefault: () => void): ApprovalPolicy {
  if (approve === "all") return approveAll;
  if (approve === "none") return approveNone;
  if (!process.stdin.isTTY || !process.stderr.isTTY) return noticeFirstRefusal(approveNone, onRefusedByDefault);
  const ask = askOnTerminal();
  // The question starts a line of its own, not the end of the answer being streamed.
  return (request) => {
    beforeQuestion();
    return ask(request);
  };
}

/** `--max-cost USD`, `--max-tokens N`, `--max-tool-calls N`, `--max-duration SECONDS`: over the tactic's `limits:`. */
function parseLimitFlags(options: RunCommandOptions): RunLimits {
  const limits: RunLimits = {};
  if (options.maxCost !== undefined) limits.maxCost = parseLimit(options.maxCost, "--max-cost", "a number of US dollars above 0", "0.50", (value) => value > 0);
  if (options.maxTokens !== undefined) limits.maxTokens = parseLimit(options.maxTokens, "--max-tokens", "a whole number of tokens above 0", "200000", (value) => Number.isInteger(value) && value > 0);
  if (options.maxToolCalls !== undefined) limits.maxToolCalls = parseLimit(options.maxToolCalls, "--max-tool-calls", "a whole number of calls >= 0", "40", (value) => Number.isInteger(value) && value >= 0);
  if (options.maxDuration !== undefined) limits.maxDuration = parseLimit(options.maxDuration, "--max-duration", "a number of seconds above 0", "300", (value) => value > 0);
  return limits;
}

function parseLimit(text: string, flag: string, what: string, example: string, valid: (value: number) => boolean): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || !valid(value)) throw new ConfigError("usage_limit", `${flag} must be ${what} (got \`${text}\`)`, { location: { file: flag }, hint: `e.g. ${flag} ${example}` });
  return value;
}


/** --input, --input-file, or standard input when it is not a terminal. */
function readInput(options: RunCommandOptions, prompt: string, stepPrompts: string[] | undefined): string {
  if (options.input !== undefined && options.inputFile !== undefined) {
    throw new ConfigError("usage_input", "give the input once: --input or --input-file, not both", { location: { file: "--input" } });
  }
  if (options.input !== undefined) return options.input;
  // `-f -` is standard input, as with most Unix tools.
  if (options.inputFile === "-") return readFileSync(0, "utf8").replace(/\n$/, "");
  if (options.inputFile !== undefined) {
    const file = path.resolve(options.inputFile);
    if (!existsSync(file)) throw new ConfigError("usage_input", `input file \`${options.inputFile}\` does not exist`, { location: { file: "--input-file" } });
    // A pipe (`-f <(cmd)`), a FIFO or a device is read as a file is: only a folder cannot be.
    if (statSync(file).isDirectory()) throw new ConfigError("usage_input", `input file \`${options.inputFile}\` is a folder, not a file`, { location: { file: "--input-file" } });
    return readFileSync(file, "utf8").replace(/\n$/, ""); // like stdin: the final newline is not part of the input
  }
  if (!process.stdin.isTTY) {
    const text = readFileSync(0, "utf8");
    if (text.length > 0) return text.replace(/\n$/, "");
  }
  const needsInput = [prompt, ...(stepPrompts ?? [])].some((template) => templatePlaceholders(template).includes("input"));
  if (needsInput) {
    throw new ConfigError("usage_input", "no input: this tactic's prompt uses {input}", { hint: `Pass --input "…", --input-file FILE, or pipe it: echo "…" | lllm run …` });
  }
  return "";
}



function parseSeconds(text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0) throw new ConfigError("usage_timeout", `--timeout must be a number of seconds above 0 (got \`${text}\`)`, { location: { file: "--timeout" }, hint: "e.g. --timeout 300" });
  return value;
}

/** Progress on stderr: warnings always; each round with --verbose. */
function reportEvent(event: AgentEvent, verbose: boolean): void {
  if (event.type === "warning") {
    warn(`[${event.agent}] ${terminalText(event.message)}`);
    return;
  }
  // A failed program is news even without --verbose: the repair may take as long again.
  if (event.type === "program_repair") {
    const reason = oneLine(event.reason, 200);
    const what = reason.startsWith("the program ") ? `program ${event.attempt} ${reason.slice("the program ".length)}` : `program ${event.attempt}: ${reason}`;
    writeErr(paint("dim", `lllm: code-action: ${what}; asking the model to repair it (repair ${event.repair} of ${event.maxRepairs})`));
    return;
  }
  if (!verbose) return;
  const tag = paint("cyan", `[${event.agent}]`);
  switch (event.type) {
    case "model_call":
      writeErr(`${tag} model call, round ${event.round + 1}: ${event.messages} messages, tools: ${event.tools.join(", ") || "(none)"}`);
      break;
    case "model_reply":
      writeErr(`${tag} reply: ${event.toolCalls.length > 0 ? plural(event.toolCalls.length, "tool call") : oneLine(event.text)} (${event.usage.promptTokens}+${event.usage.completionTokens} tokens)`);
      break;
    case "tool_call": {
      writeErr(`${tag} ${terminalText(event.call.name)}(${oneLine(JSON.stringify(event.call.arguments))}) -> ${oneLine(resultText(event.call))}${event.repeated ? " (repeated, not run)" : ""} ${paint("dim", `${Math.round(event.durationMs)} ms`)}`);
      const failure = toolFailureText(event.call);
      if (failure) writeErr(failure);
      break;
    }
    case "parse_retry":
      writeErr(`${tag} reply did not parse (attempt ${event.attempt}): ${oneLine(event.message)}`);
      break;
  }
}

function resultText(call: { error?: string; result?: unknown }): string {
  if (call.error !== undefined) return `Error: ${call.error}`;
  return typeof call.result === "string" ? call.result : JSON.stringify(call.result ?? null);
}

/**
 * A `--package` entry as a resume finds it again from any folder: a folder by its absolute path; a shared package's
 * source (`npm:…`, `oci://…`) as written, since it is resolved through the lock, not the folder.
 */
function resumablePackage(entry: string): string {
  return isRemoteSource(entry) || !existsSync(entry) ? entry : path.resolve(entry);
}
