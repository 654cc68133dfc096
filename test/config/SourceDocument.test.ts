import { describe, expect, it } from "vitest";
import { SourceDocument } from "../../src/config/index.js";
import { thrownConfigError } from "./fixtures/helpers.js";

const text = ["name: t", "global:", "  model_name: m", "agent_configs:", "  - name: a", "    tools: [x, y]", "  - name: b", "    proxy:", ""].join("\n");

describe("SourceDocument", () => {
  const document = SourceDocument.parse(text, "t.yaml");

  it("keeps the data and locates the value at a path", () => {
    expect(document.data).toEqual({ name: "t", global: { model_name: "m" }, agent_configs: [{ name: "a", tools: ["x", "y"] }, { name: "b", proxy: null }] });
    expect(document.locate(["global", "model_name"])).toEqual({ file: "t.yaml", line: 3, column: 15 });
    expect(document.locate(["agent_configs", 0, "tools", 1])).toEqual({ file: "t.yaml", line: 6, column: 16 });
  });

  it("points at the parent object for a missing key, and at the key itself for locateKey", () => {
    expect(document.locate(["agent_configs", 1, "model_name"])).toEqual({ file: "t.yaml", line: 7, column: 5 });
    expect(document.has(["agent_configs", 1, "model_name"])).toBe(false);
    expect(document.locateKey(["agent_configs", 0, "tools"])).toEqual({ file: "t.yaml", line: 6, column: 5 });
    // a key written with no value is found on its own line
    expect(document.has(["agent_configs", 1, "proxy"])).toBe(true);
    expect(document.locate(["agent_configs", 1, "proxy"])).toEqual({ file: "t.yaml", line: 8, column: 5 });
  });

  it("follows `<<` merge keys to where the inherited value is written", () => {
    const merged = SourceDocument.parse("defaults: &d\n  model_name: m\nglobal:\n  <<: *d\n  tools: [a]\n", "m.yaml");
    expect(merged.data.global).toEqual({ model_name: "m", tools: ["a"] });
    expect(merged.locate(["global", "model_name"])).toEqual({ file: "m.yaml", line: 2, column: 15 });
  });

  it("reports every YAML error with its position", () => {
    const error = thrownConfigError(() => SourceDocument.parse("a: 1\na: 2\nb:\n\t c: 1\n", "bad.yaml"));
    expect(error.code).toBe("config_parse");
    expect(error.message).toBe(
      "2 problems:\n  bad.yaml:2:1: duplicate key `a`: each key may appear once in a mapping\n  bad.yaml:4:1: Tabs are not allowed as indentation",
    );
  });

  it("says what is expected of an empty file or a top level that is not a mapping", () => {
    expect(thrownConfigError(() => SourceDocument.parse("# only a comment\n", "e.yaml")).message).toBe(
      "e.yaml: the file is empty: expected a mapping of keys (key: value) at the top level",
    );
    expect(thrownConfigError(() => SourceDocument.parse("- a\n- b\n", "l.yaml")).message).toBe("l.yaml:1:1: the top level is a list: expected a mapping of keys (key: value)");
    expect(SourceDocument.parse("", "e.yaml", { allowEmpty: true }).data).toEqual({});
  });

  it("refuses a second YAML document in one file", () => {
    expect(thrownConfigError(() => SourceDocument.parse("a: 1\n---\nb: 2\n", "d.yaml")).message).toBe(
      "d.yaml:2:1: more than one YAML document (a second `---`): the file must hold one",
    );
  });
});
