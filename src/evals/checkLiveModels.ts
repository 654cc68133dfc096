import { modelChain } from "../config/index.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { modelEndpoint } from "../providers/createModel.js";
import { runTree } from "../tactics/runTree.js";
import type { CaseMode } from "./CaseResult.js";
import { judgeDefaultModel } from "./runCase.js";
import type { TestCase, TestFile } from "./TestFile.js";

/** A case that will call its models. */
export interface LiveCase {
  testFile: TestFile;
  testCase: TestCase;
  mode: CaseMode;
}

/**
 * Every model the live cases will call (each agent's chain, nested tactics' included, and their judges') must have
 * its key and server: one `ConfigError` (exit 2) before any case runs, naming each missing key once with the cases
 * that need it, instead of a failed case for each, recorded as if the model had been asked.
 */
export function checkLiveModels(cases: readonly LiveCase[], env: NodeJS.ProcessEnv): void {
  const missing = new Map<string, { error: ConfigError; cases: LiveCase[] }>();
  const checked = new Map<string, ConfigError | undefined>();
  for (const entry of cases) {
    if (entry.mode === "replay") continue;
    for (const { model, invokerConfig } of modelsOf(entry)) {
      if (model.startsWith("scripted:")) continue;
      const key = JSON.stringify([model, invokerConfig ?? null]);
      if (!checked.has(key)) checked.set(key, endpointError(model, invokerConfig, env));
      const error = checked.get(key);
      if (!error) continue;
      const known = missing.get(error.message) ?? { error, cases: [] };
      if (!known.cases.includes(entry)) known.cases.push(entry);
      missing.set(error.message, known);
    }
  }
  if (missing.size === 0) return;
  const problems: ConfigProblem[] = [...missing.values()].map(({ error, cases: needing }) => {
    const recording = needing.some((entry) => entry.mode === "record");
    const names = needing.slice(0, 3).map((entry) => `\`${entry.testCase.name}\``).join(", ") + (needing.length > 3 ? ` and ${needing.length - 3} more` : "");
    const what = `${needing.length === 1 ? "case" : `${needing.length} cases`} ${names} ${recording ? "must be recorded" : "run live (no cassette)"}`;
    const hint = [error.hint, recording ? undefined : "A case without a cassette calls its model; record it once where the key is set (lllm test --record), and its replays need none."].filter(Boolean).join("\n");
    return { message: `${error.message}; ${what}`, location: needing[0]!.testCase.location, ...(hint ? { hint } : {}) };
  });
  const first = [...missing.values()][0]!.error;
  throw ConfigError.fromProblems(first.code as ConstructorParameters<typeof ConfigError>[0], problems);
}

/** The models a case calls live: its tactic's run tree's chains (with each agent's server settings), then its judges'. */
function modelsOf({ testFile, testCase }: LiveCase): Array<{ model: string; invokerConfig?: Record<string, unknown> }> {
  const models: Array<{ model: string; invokerConfig?: Record<string, unknown> }> = [];
  for (const tactic of runTree(testFile.prepared)) {
    for (const agent of tactic.agents) {
      const invokerConfig = agent.config.invoker_config;
      for (const model of modelChain(agent.config)) models.push({ model, ...(invokerConfig ? { invokerConfig } : {}) });
    }
  }
  for (const assertion of testCase.assertions) {
    if (assertion.type !== "judge") continue;
    const named = typeof assertion.value === "object" && assertion.value !== null ? (assertion.value as { model?: unknown }).model : undefined;
    models.push({ model: typeof named === "string" ? named : judgeDefaultModel(testFile) });
  }
  return models;
}

function endpointError(model: string, invokerConfig: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv): ConfigError | undefined {
  try {
    modelEndpoint({ model, ...(invokerConfig ? { invokerConfig } : {}), env });
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}
