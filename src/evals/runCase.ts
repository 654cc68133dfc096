import { existsSync } from "node:fs";
import path from "node:path";
import { replySizeBytes, type AgentConfig } from "../config/index.js";
import { createModel as createProviderModel } from "../providers/createModel.js";
import type { Model } from "../providers/Model.js";
import { ScriptedModel } from "../providers/ScriptedModel.js";
import { proxyKeyVariables } from "../store/proxyKeyVariables.js";
import { defaultModel } from "../tactics/runModels.js";
import { environmentSecrets, redactorOf, secrets } from "../util/redact.js";
import { displayPath } from "../config/displayPath.js";
import type { CaseMode, CaseProblem, CaseResult } from "./CaseResult.js";
import type { CaseRun } from "./CaseRun.js";
import { CassetteRecording, type Redaction } from "./cassettes/CassetteRecording.js";
import type { Cassette } from "./cassettes/readCassette.js";
import { ReplayGuard } from "./cassettes/ReplayGuard.js";
import { evaluateCase, type Evaluation } from "./evaluateCase.js";
import type { CaseStatusLog } from "./CaseStatusLog.js";
import { runTurns } from "./runTurns.js";
import { roundCost } from "../util/roundCost.js";
import type { TestCase, TestFile } from "./TestFile.js";
import { shellArgument } from "../util/shellArgument.js";

export interface CaseSetup {
  testFile: TestFile;
  testCase: TestCase;
  mode: CaseMode;
  /** The cassette to replay (`replay`). */
  cassette?: Cassette;
  /** Where the case's cassette is written (`record`). */
  cassetteFile: string;
  /** `false`: the runs are not recorded in the run store. */
  log?: boolean;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  warn: (message: string) => void;
  /** Where the case's outcome is marked on its runs in the run store. */
  statusLog: CaseStatusLog;
}

interface Repetition {
  runs: CaseRun[];
  evaluation: Evaluation;
  recording?: CassetteRecording;
}

/**
 * Run one case: replayed from its cassette (no key, no network, the tools for real), or live (`repeat` times, and
 * with `record` its cassette written from the first run that passed, else the first), then decided by
 * `evaluateCase`. Never throws for what the case did: a failure is the result.
 */
export async function runCase(setup: CaseSetup): Promise<CaseResult> {
  const { testFile, testCase, mode } = setup;
  const started = performance.now();
  const rerecordHint = `Record it again if the change is intended: lllm test ${shellArgument(testFile.shown)} --update --filter ${shellArgument(testCase.name)}`;
  const judgeDefault = judgeDefaultModel(testFile);
  const providerModel = (name: string | undefined): Model => createProviderModel({ model: name ?? judgeDefault, ...(setup.env ? { env: setup.env } : {}) });
  const repetitions: Repetition[] = [];
  const count = mode === "replay" ? 1 : testCase.repeat;
  for (let index = 0; index < count && !(index > 0 && setup.signal?.aborted); index += 1) {
    let createModel: ((config: AgentConfig) => Model) | undefined;
    let judgeModel = providerModel;
    let recording: CassetteRecording | undefined;
    let guard: ReplayGuard | undefined;
    if (mode === "replay") {
      // One model for the whole case (every turn, nested tactics, judges): each agent answered from its own turns,
      // each call checked against the setup it was recorded with (the model, the tools as the model read them).
      const { script, file } = setup.cassette!;
      const scripted = new ScriptedModel(script, { name: `scripted:${file}`, rerecordHint });
      const checked = (guard = new ReplayGuard({ scripted, script, setup: setup.cassette!.setup, redactValue: (value) => replayRedactor(testFile, setup.env ?? process.env).redactValue(value), rerecordHint }));
      createModel = (config) => checked.model(config.model_name ?? "scripted");
      judgeModel = (name) => checked.model(name ?? judgeDefault);
    } else if (mode === "record") {
      const kept = (recording = new CassetteRecording());
      createModel = (config) => kept.model(defaultModel(config, { input: null, ...(setup.env ? { env: setup.env } : {}) }, replySizeBytes(testFile.prepared.settings.reply_size)));
      judgeModel = (name) => kept.model(providerModel(name));
    }
    const runs = await runTurns({
      testFile,
      testCase,
      ...(createModel ? { createModel } : {}),
      ...(recording ? { onEvent: (event) => recording!.onEvent(event) } : {}),
      ...(setup.log !== undefined ? { log: setup.log } : {}),
      ...(setup.signal ? { signal: setup.signal } : {}),
      ...(setup.env ? { env: setup.env } : {}),
      warn: setup.warn,
    });
    let evaluation = await evaluateCase(testCase, runs, { folder: path.dirname(testFile.file), judgeModel, replayed: mode === "replay", rerecordHint, ...(setup.signal ? { signal: setup.signal } : {}) });
    // Checked after the judges, whose calls are in the cassette too.
    const unused = guard && !evaluation.problem && !setup.signal?.aborted ? guard.unusedTurns() : undefined;
    if (unused) evaluation = { ...evaluation, pass: false, problem: { kind: "diverged", message: unused, hint: rerecordHint } };
    setup.statusLog.add(testFile, runs, evaluation.pass);
    repetitions.push({ runs, evaluation, ...(recording ? { recording } : {}) });
  }
  const passed = repetitions.filter((repetition) => repetition.evaluation.pass).length;
  let pass = repetitions.length > 0 && passed / count >= testCase.threshold && !(setup.signal?.aborted && repetitions.length < count);
  const reported = (pass ? repetitions.find((repetition) => repetition.evaluation.pass) : repetitions.find((repetition) => !repetition.evaluation.pass)) ?? repetitions[0]!;
  const { evaluation } = reported;
  let problem = evaluation.problem;
  let cassette = mode === "replay" ? setup.cassette!.file : undefined;
  if (mode === "record") {
    const kept = repetitions.find((repetition) => repetition.evaluation.pass) ?? repetitions[0]!;
    // A case that failed does not replace the cassette it has (`--update` with a flaky model would lose a good one).
    if (!pass && existsSync(setup.cassetteFile)) setup.warn(`case \`${testCase.name}\` of ${testFile.shown} failed: its cassette ${displayPath(setup.cassetteFile)} was kept; fix the case (or delete the cassette) to record it again`);
    else if (writable(kept)) {
      try {
        kept.recording!.write(setup.cassetteFile, { tactic: tacticName(testFile), test: path.basename(testFile.file), case: testCase.name }, cassetteRedactor(testFile, setup.env ?? process.env));
        cassette = setup.cassetteFile;
      } catch (error) {
        // Recording is what was asked: a case whose cassette could not be written fails (the run goes on).
        const unwritten: CaseProblem = { kind: "error", message: `no cassette written to ${displayPath(setup.cassetteFile)}: ${error instanceof Error ? error.message : String(error)}` };
        if (problem) setup.warn(`case \`${testCase.name}\` of ${testFile.shown}: ${unwritten.message}`);
        else problem = unwritten;
        pass = false;
      }
    } else setup.warn(`case \`${testCase.name}\` of ${testFile.shown}: no cassette written (${kept.runs.at(-1)?.error?.message ?? "no model call was made"})`);
  }
  const allRuns = repetitions.flatMap((repetition) => repetition.runs);
  return {
    file: testFile.shown,
    name: testCase.name,
    status: pass ? "passed" : "failed",
    mode,
    ...(problem ? { problem } : {}),
    assertions: evaluation.assertions,
    score: evaluation.score,
    error: reported.runs.at(-1)?.error ?? null,
    ...(count > 1 ? { repeat: { runs: repetitions.length, passed, threshold: testCase.threshold } } : {}),
    runIds: allRuns.flatMap((run) => (run.runId === null ? [] : [run.runId])),
    ...(cassette !== undefined ? { cassette } : {}),
    durationMs: Math.round(performance.now() - started),
    usage: {
      promptTokens: sum(allRuns, (run) => run.usage.promptTokens),
      completionTokens: sum(allRuns, (run) => run.usage.completionTokens),
      totalTokens: sum(allRuns, (run) => run.usage.totalTokens),
      llmCalls: sum(allRuns, (run) => run.usage.llmCalls),
    },
    cost: allRuns.some((run) => run.cost === null && run.usage.llmCalls > 0) ? null : roundCost(sum(allRuns, (run) => run.cost ?? 0)),
  };
}

/** A recorded run is worth a cassette unless the model could not be reached or the run was stopped. */
function writable(repetition: Repetition): boolean {
  const error = repetition.runs.at(-1)?.error;
  if (!repetition.recording || repetition.recording.empty) return false;
  return !error || !(error.classes.includes("ProviderError") || error.classes.includes("InterruptedError"));
}

/** The model a judge calls when it names none: the test file's `model`, else the tactic's first agent's. */
export function judgeDefaultModel(testFile: TestFile): string {
  return testFile.model ?? testFile.prepared.agents.find((agent) => typeof agent.config.model_name === "string")?.config.model_name ?? "gpt-4o-mini";
}

/** The name a cassette records its tactic under (and is checked against). */
export function tacticName(testFile: TestFile): string {
  return testFile.prepared.tactic.config.name ?? path.basename(testFile.prepared.tactic.file).replace(/\.(ya?ml|json|[cm]?[jt]s)$/, "");
}

/**
 * What a cassette must never hold: the values of the environment's key-like variables, the keys the tactic's
 * agents and proxies name (`api_key_env`), and every key lllm itself used.
 */
function cassetteRedactor(testFile: TestFile, env: NodeJS.ProcessEnv): Redaction {
  const names = proxyKeyVariables(testFile.prepared.registry);
  for (const agent of testFile.prepared.agents) {
    const name = agent.config.invoker_config?.api_key_env;
    if (typeof name === "string") names.add(name);
  }
  const own = redactorOf([...environmentSecrets(env), ...[...names].map((name) => env[name])]);
  return { redact: (text) => secrets.redact(own.redact(text)), redactValue: (value) => secrets.redactValue(own.redactValue(value)) };
}

/**
 * The cassette redaction a replay applies to the tools offered now before comparing them with the recorded ones:
 * one per test file and environment, made on first use (a thousand replayed cases of one file share it). A
 * recording makes its own when it writes, so that it knows every secret of that moment.
 */
function replayRedactor(testFile: TestFile, env: NodeJS.ProcessEnv): Redaction {
  const known = replayRedactors.get(testFile);
  if (known?.env === env) return known.redaction;
  const redaction = cassetteRedactor(testFile, env);
  replayRedactors.set(testFile, { env, redaction });
  return redaction;
}

const replayRedactors = new WeakMap<TestFile, { env: NodeJS.ProcessEnv; redaction: Redaction }>();

function sum(runs: CaseRun[], value: (run: CaseRun) => number): number {
  return runs.reduce((total, run) => total + value(run), 0);
}

