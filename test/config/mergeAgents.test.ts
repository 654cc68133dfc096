import { describe, expect, it } from "vitest";
import { loadTacticFile, mergeAgents } from "../../src/config/index.js";
import type { TacticConfig } from "../../src/config/index.js";
import { configError, fixture, shown, thrownConfigError } from "./fixtures/helpers.js";

describe("merging global into agents", () => {
  it("merges model_args and proxy field by field, and lets an agent's tools replace the global list", async () => {
    const tactic = await loadTacticFile(fixture("global-merge.yaml"));
    const [weather, quick] = tactic.agents;
    expect(weather).toEqual({
      name: "weather_analyst",
      model_name: "gpt-4o",
      system_prompt: "You are a weather analyst.",
      model_args: { temperature: 0.1, max_tokens: 800 },
      tools: ["weather_pkg.tools:get_weather", "search"],
      proxy: { activate_proxies: ["weather"], exec_env: "interpreter", timeout: 60 },
    });
    expect(quick).toEqual({
      name: "quick_analyst",
      model_name: "gpt-4o",
      system_prompt: "You answer weather questions in one sentence.",
      model_args: { temperature: 0.7, max_tokens: 800 },
      tools: ["search"],
      proxy: { activate_proxies: ["weather"], exec_env: "interpreter", timeout: 30 },
    });
    // global itself is left as written
    expect(tactic.config.global?.proxy?.timeout).toBe(60);
    // where each value of an agent was written: its own entry, or global
    expect(tactic.locateAgent(1, ["proxy", "timeout"])).toEqual({ file: shown("global-merge.yaml"), line: 18, column: 16 });
    expect(tactic.locateAgent(1, ["proxy", "exec_env"])).toEqual({ file: shown("global-merge.yaml"), line: 8, column: 15 });
    expect(tactic.locateAgent(1, ["tools", 0])).toEqual({ file: shown("global-merge.yaml"), line: 16, column: 13 });
    expect(tactic.locateAgent(0, ["tools", 1])).toEqual({ file: shown("global-merge.yaml"), line: 5, column: 42 });
  });

  it("reports every agent without a model or a system prompt, conflicting prompts and duplicate names", async () => {
    const error = await configError(loadTacticFile(fixture("incomplete-agents.yaml")));
    const file = shown("incomplete-agents.yaml");
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe(
      [
        "5 problems:",
        `  ${file}:5:5: agent \`analyst\` (agent_configs[0]) has no model_name: set it there or in global, or pass --model`,
        `  ${file}:7:5: agent \`writer\` (agent_configs[1]) has no model_name: set it there or in global, or pass --model`,
        `  ${file}:7:5: agent \`writer\` (agent_configs[1]) has no system prompt: set system_prompt or system_prompt_path there or in global`,
        `  ${file}:8:5: agent \`editor\` (agent_configs[2]) sets both system_prompt and system_prompt_path: keep one`,
        `  ${file}:12:11: duplicate agent name \`analyst\`: agent_configs[0] and agent_configs[3] must have different names`,
      ].join("\n"),
    );
  });

  it("uses modelOverride for every agent, and defaultModel only where no model is set", async () => {
    const overridden = await loadTacticFile(fixture("global-merge.yaml"), { modelOverride: "scripted:replay.json" });
    expect(overridden.agents.map((agent) => agent.model_name)).toEqual(["scripted:replay.json", "scripted:replay.json"]);
    expect(overridden.locateAgent(0, ["model_name"])).toBeUndefined();

    const config: TacticConfig = {
      global: { system_prompt: "s" },
      agent_configs: [{ name: "a" }, { name: "b", model_name: "own" }],
    };
    expect(mergeAgents(config, { locate: () => undefined, file: "t.yaml", defaultModel: "settings-model" }).map((agent) => agent.model_name)).toEqual([
      "settings-model",
      "own",
    ]);
    expect(mergeAgents(config, { locate: () => undefined, file: "t.yaml", modelOverride: "flag" }).map((agent) => agent.model_name)).toEqual(["flag", "flag"]);
  });

  it("lets an agent's own prompt, of either kind, replace the global one", () => {
    const config: TacticConfig = {
      global: { model_name: "m", system_prompt: "global prompt" },
      agent_configs: [{ name: "a" }, { name: "b", system_prompt_path: "pkg.prompts:b" }],
    };
    const [a, b] = mergeAgents(config, { locate: () => undefined, file: "t.yaml" });
    expect(a).toEqual({ name: "a", model_name: "m", system_prompt: "global prompt" });
    expect(b).toEqual({ name: "b", model_name: "m", system_prompt_path: "pkg.prompts:b" });
  });

  it("needs agents unless the tactic type is a package tactic", () => {
    const at = { file: "t.yaml", line: 1, column: 1 };
    const error = thrownConfigError(() => mergeAgents({ tactic_type: "agent" }, { locate: () => at, file: "t.yaml" }));
    expect(error.message).toBe("t.yaml:1:1: no agents: tactic_type `agent` needs `agent_configs` with at least one agent");
    expect(mergeAgents({ tactic_type: "research.tactics:deep_dive" }, { locate: () => at, file: "t.yaml" })).toEqual([]);
  });

  it("checks that `agent` and pipeline steps name defined agents", () => {
    const config: TacticConfig = {
      tactic_type: "pipeline",
      agent: "analyts",
      global: { model_name: "m", system_prompt: "s" },
      agent_configs: [{ name: "analyst" }, { name: "writer" }],
      steps: [{ agent: "analyst" }, { agent: "editor" }],
    };
    const error = thrownConfigError(() => mergeAgents(config, { locate: () => undefined, file: "t.yaml" }));
    expect(error.problems).toEqual([
      { message: "`agent` names agent `analyts`, which is not in agent_configs", location: { file: "t.yaml" }, hint: "did you mean `analyst`?" },
      { message: "steps[1].agent names agent `editor`, which is not in agent_configs", location: { file: "t.yaml" }, hint: "agents: analyst, writer" },
    ]);
  });
});
