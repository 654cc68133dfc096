import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, InterruptedError, ProviderError } from "../../src/errors.js";
import { ScriptedModel } from "../../src/providers/ScriptedModel.js";
import { runRecorded } from "../../src/run/runRecorded.js";
import { RunStore } from "../../src/store/RunStore.js";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";
import { tempTree } from "../helpers/tempTree.js";

// The one flow of `lllm run` and of each `lllm batch` item: check, record, run, count, close the record.
const TACTIC = "name: t\nprompt: 'In {language}: {input}'\nagent_configs:\n  - name: a\n    model_name: gpt-4o-mini\n    system_prompt: You answer.\n";

async function setUp() {
  const dir = tempTree({ "t.yaml": TACTIC });
  const prepared = await prepareTactic(path.join(dir, "t.yaml"), { cwd: dir, home: dir });
  const env = { LLLM_HOME: dir };
  const warnings: string[] = [];
  return { dir, prepared, env, warnings, warn: (message: string) => void warnings.push(message) };
}

describe("runRecorded", () => {
  it("records a run that succeeds and answers its usage, cost and run id", async () => {
    const { dir, prepared, env, warn, warnings } = await setUp();
    const model = new ScriptedModel([{ text: "Bonjour", usage: { prompt_tokens: 10, completion_tokens: 2 } }]);
    const run = await runRecorded(prepared, { input: "hi", vars: { language: "French" }, env, warn, createModel: () => model });
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    expect(run.result.output).toBe("Bonjour");
    expect(run.usage).toEqual({ promptTokens: 10, completionTokens: 2, totalTokens: 12, llmCalls: 1, cachedPromptTokens: 0, reasoningTokens: 0 });
    expect(run.summary).toContain("1 model call");
    expect(run.runId).toBeDefined();
    const store = await RunStore.open(path.join(dir, "logs.db"));
    try {
      expect(store.getRun(run.runId!)).toMatchObject({ status: "ok", input: "hi", prompt_tokens: 10 });
    } finally {
      store.close();
    }
    expect(warnings).toEqual([]);
  });

  it("a failed run is returned, recorded, with what it spent; nothing is thrown", async () => {
    const { prepared, env, warn } = await setUp();
    const failing = { name: "gpt-4o-mini", generate: async () => Promise.reject(new ProviderError("provider_auth", "the key was refused")) };
    const run = await runRecorded(prepared, { input: "hi", vars: { language: "French" }, env, warn, createModel: () => failing });
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect((run.error as ProviderError).code).toBe("provider_auth");
    expect(run.runId).toBeDefined();
    expect(run.usage.llmCalls).toBe(0);
  });

  it("an error that is not lllm's is recorded with the code --json and batch lines give it, internal_error", async () => {
    const { dir, prepared, env, warn } = await setUp();
    const broken = { name: "gpt-4o-mini", generate: async () => Promise.reject(new TypeError("undefined is not a function")) };
    const run = await runRecorded(prepared, { input: "hi", vars: { language: "French" }, env, warn, createModel: () => broken });
    expect(run.ok).toBe(false);
    const store = await RunStore.open(path.join(dir, "logs.db"));
    try {
      expect(store.getRun(run.runId!)).toMatchObject({ status: "error", error_code: "internal_error", error_message: expect.stringContaining("undefined is not a function") });
    } finally {
      store.close();
    }
  });

  it("a missing template variable fails before the record is opened, with the caller's hint", async () => {
    const { dir, prepared, env, warn } = await setUp();
    const run = await runRecorded(prepared, { input: "hi", env, warn, missingVariableHint: (name) => `Add a \`${name}\` column.`, createModel: () => new ScriptedModel([]) });
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error).toBeInstanceOf(ConfigError);
    expect((run.error as ConfigError).message).toContain("{language} in prompt has no value\n  Add a `language` column.");
    expect(run.runId).toBeUndefined();
    expect(run.cost).toBeNull();
    const store = await RunStore.open(path.join(dir, "logs.db"));
    try {
      expect(store.listRuns()).toEqual([]);
    } finally {
      store.close();
    }
  });

  it("a run stopped by its signal fails with an InterruptedError", async () => {
    const { prepared, env, warn } = await setUp();
    const controller = new AbortController();
    const stopping = { name: "gpt-4o-mini", generate: async () => { controller.abort(new InterruptedError("interrupted", "interrupted by the user")); throw new Error("aborted"); } };
    const run = await runRecorded(prepared, { input: "hi", vars: { language: "French" }, env, warn, signal: controller.signal, createModel: () => stopping });
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error).toBeInstanceOf(InterruptedError);
  });
});

describe("the run's folder", () => {
  it("is named by the run id, which must be a folder name, never a path", async () => {
    const { ArtifactStore } = await import("../../src/codeaction/ArtifactStore.js");
    const home = tempTree({});
    expect(ArtifactStore.forRun({ LLLM_HOME: home }, { runId: "01ABC" }).folder).toBe(path.join(home, "runs", "01ABC", "artifacts"));
    for (const runId of ["../elsewhere", "a/b", ""]) {
      expect(() => ArtifactStore.forRun({ LLLM_HOME: home }, { runId })).toThrow(expect.objectContaining({ code: "run_id_invalid" }));
    }
  });
});
