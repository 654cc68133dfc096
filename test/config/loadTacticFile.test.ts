import { describe, expect, it } from "vitest";
import { loadTacticFile } from "../../src/config/index.js";
import type { SourceLocation } from "../../src/errors.js";
import { configError, fixture, shown } from "./fixtures/helpers.js";

describe("loadTacticFile: the base chain", () => {
  it("merges mappings key by key and lets the child replace lists and values", async () => {
    const tactic = await loadTacticFile(fixture("chain/child.yaml"));

    expect(tactic.file).toBe(fixture("chain/child.yaml"));
    expect(tactic.files).toEqual([fixture("chain/child.yaml"), fixture("chain/common/parent.yaml"), fixture("chain/grandparent.yaml")]);
    // scalars: the child wins over the parent; a key only the parent has is inherited
    expect(tactic.config.name).toBe("child");
    expect(tactic.config.description).toBe("The child wins on scalars.");
    expect(tactic.config.prompt).toBe("Question: {input}");
    expect(tactic.config.vars).toEqual({ city: "Paris" });
    // mappings merge through three files: temperature from the child, max_tokens from the parent, top_p from the grandparent
    expect(tactic.config.global?.model_args).toEqual({ temperature: 0.1, max_tokens: 500, top_p: 0.9 });
    // lists replace: the child's tools and agent_configs, not a concatenation
    expect(tactic.config.global?.tools).toEqual(["weather_pkg.tools:get_weather"]);
    expect(tactic.config.agent_configs).toEqual([{ name: "analyst", system_prompt: "You are an analyst." }]);
    // `base` is applied, not kept
    expect(tactic.config).not.toHaveProperty("base");
    expect(tactic.config.tactic_type).toBe("agent");
  });

  it("resolves packages against the file that lists them", async () => {
    const tactic = await loadTacticFile(fixture("chain/child.yaml"));
    expect(tactic.packages).toEqual([fixture("pkgs/weather")]);

    const parentOnly = await loadTacticFile(fixture("ref/child.yaml"), { resolveRef: () => fixture("ref/common.yaml") });
    expect(parentOnly.packages).toEqual([fixture("ref/pkgs/shared")]);
  });

  it("records which file and line each merged value came from", async () => {
    const tactic = await loadTacticFile(fixture("chain/child.yaml"));
    const at = (name: string, line: number, column: number): SourceLocation => ({ file: shown(name), line, column });

    expect(tactic.locate(["global", "model_args", "temperature"])).toEqual(at("chain/child.yaml", 6, 29));
    expect(tactic.locate(["global", "model_args", "max_tokens"])).toEqual(at("chain/common/parent.yaml", 7, 28));
    expect(tactic.locate(["global", "model_args", "top_p"])).toEqual(at("chain/grandparent.yaml", 5, 41));
    expect(tactic.locate(["global", "tools", 0])).toEqual(at("chain/child.yaml", 7, 11));
    // the parent's second tool was replaced, so it has no place in the result
    expect(tactic.locate(["global", "tools", 1])).toBeUndefined();
    // a default is in no file
    expect(tactic.locate(["tactic_type"])).toBeUndefined();
    // an agent's value inherited from global is found in global, in the file that wrote it
    expect(tactic.locateAgent(0, ["model_name"])).toEqual(at("chain/common/parent.yaml", 6, 15));
    expect(tactic.locateAgent(0, ["tools", 0])).toEqual(at("chain/child.yaml", 7, 11));
    expect(tactic.locateAgent(0, ["system_prompt"])).toEqual(at("chain/child.yaml", 10, 20));
  });

  it("follows a package ref through resolveRef, passing the place of the base line", async () => {
    const calls: Array<{ ref: string; from: SourceLocation }> = [];
    const tactic = await loadTacticFile(fixture("ref/child.yaml"), {
      resolveRef: (ref, from) => {
        calls.push({ ref, from });
        return fixture("ref/common.yaml");
      },
    });
    expect(calls).toEqual([{ ref: "weather.tactics:common", from: { file: shown("ref/child.yaml"), line: 2, column: 7 } }]);
    expect(tactic.files).toEqual([fixture("ref/child.yaml"), fixture("ref/common.yaml")]);
    expect(tactic.agents[0]?.model_name).toBe("gpt-4o");
  });

  it("refuses a package ref base when there is no resolver", async () => {
    const error = await configError(loadTacticFile(fixture("ref/child.yaml")));
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe(
      `${shown("ref/child.yaml")}:2:7: base \`weather.tactics:common\` is a package ref, but no packages are available to resolve it here\n` +
        "  use a path relative to this file, e.g. `base: ./common.yaml`",
    );
  });

  it("reports a cycle with the whole chain, at the base line that closes it", async () => {
    const error = await configError(loadTacticFile(fixture("cycle/a.yaml")));
    expect(error.code).toBe("config_base_cycle");
    expect(error.message).toBe(
      `${shown("cycle/b.yaml")}:2:7: \`base\` cycle: ${shown("cycle/a.yaml")} -> ${shown("cycle/b.yaml")} -> ${shown("cycle/a.yaml")}\n` +
        "  remove the `base` that points back",
    );
  });

  it("reports a missing base file with the path and the line that names it", async () => {
    const error = await configError(loadTacticFile(fixture("missing-base.yaml")));
    expect(error.code).toBe("config_not_found");
    expect(error.message).toBe(
      `${shown("missing-base.yaml")}:2:7: base file not found: ${shown("nowhere.yaml")}\n  a \`base\` path is relative to the file that names it`,
    );
  });

  it("reports a missing tactic file", async () => {
    const error = await configError(loadTacticFile(fixture("nope.yaml")));
    expect(error.code).toBe("config_not_found");
    expect(error.message).toBe(`tactic file not found: ${shown("nope.yaml")}`);
    expect(error.hint).toBe("A tactic is a path, relative to the current folder, or a package's tactic by its ref (weather.tactics:weather); `lllm init` makes a package with one.");
  });

  it("reads a JSON tactic file, with positions", async () => {
    const tactic = await loadTacticFile(fixture("tactic.json"));
    expect(tactic.agents).toEqual([
      { name: "analyst", model_name: "gpt-4o-mini", tools: ["search"], system_prompt: "You are an analyst.", max_interrupt_steps: 3 },
    ]);
    expect(tactic.locateAgent(0, ["tools", 0])).toEqual({ file: shown("tactic.json"), line: 3, column: 54 });

    const error = await configError(loadTacticFile(fixture("json-wrong.json")));
    expect(error.message).toBe(`${shown("json-wrong.json")}:4:71: agent_configs[0].max_exception_retry must be at least 0 (got -1)`);
  });

  it("validates every file of the chain on its own, pointing at the file with the problem", async () => {
    const error = await configError(loadTacticFile(fixture("bad-chain/child.yaml")));
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe(
      "2 problems:\n" +
        `  ${shown("bad-chain/child.yaml")}:3:3: unknown key \`modle_name\` in global\n    did you mean \`model_name\`?\n` +
        `  ${shown("bad-chain/base.yaml")}:3:24: global.max_interrupt_steps must be an integer (got 2.5)`,
    );
  });
});
