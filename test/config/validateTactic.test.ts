import { describe, expect, it } from "vitest";
import { loadTacticFile, packageSchema, SourceDocument, tacticSchema, validateAgainstSchema } from "../../src/config/index.js";
import { configError, fixture, shown } from "./fixtures/helpers.js";

describe("validation against the tactic schema", () => {
  it("reports a broken YAML file with line and column", async () => {
    const error = await configError(loadTacticFile(fixture("broken.yaml")));
    expect(error.code).toBe("config_parse");
    expect(error.message).toBe(`${shown("broken.yaml")}:7:3: Flow sequence in block collection must be sufficiently indented and end with a ]`);
  });

  it("reports a wrong type with file:line:col, the dotted key path and what was expected", async () => {
    const error = await configError(loadTacticFile(fixture("wrong-type.yaml")));
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe(`${shown("wrong-type.yaml")}:7:26: agent_configs[0].max_interrupt_steps must be an integer (got "three")`);
    expect(error.problems).toEqual([
      {
        message: 'agent_configs[0].max_interrupt_steps must be an integer (got "three")',
        location: { file: shown("wrong-type.yaml"), line: 7, column: 26 },
      },
    ]);
  });

  it("reports an unknown key at the key, with the closest valid key", async () => {
    const error = await configError(loadTacticFile(fixture("unknown-key.yaml")));
    expect(error.message).toBe(`${shown("unknown-key.yaml")}:7:5: unknown key \`modle_args\` in agent_configs[0]\n  did you mean \`model_args\`?`);
  });

  it("reports every problem of a file at once, in line order, one line each", async () => {
    const error = await configError(loadTacticFile(fixture("many-errors.yaml")));
    const file = shown("many-errors.yaml");
    expect(error.problems).toHaveLength(7);
    expect(error.message).toBe(
      [
        "7 problems:",
        `  ${file}:1:7: name must be an identifier: letters, digits, \`_\` and \`-\`, starting with a letter or \`_\` (got "1bad")`,
        `  ${file}:4:12: sandbox.backend must be one of: auto, bwrap, gvisor, none (got "docker")`,
        `  ${file}:8:14: global.proxy.timeout must be a number (got "fast")`,
        `  ${file}:9:18: global.proxy.cutoff_date must be a date written YYYY-MM-DD (got "yesterday")`,
        `  ${file}:13:15: agent_configs[0].api_type must be one of: completion, response (got "chat")`,
        // an anyOf of `required` alternatives becomes one line, not one per branch
        `  ${file}:15:9: agent_configs[0].mcp_servers[0] must set \`command\` or \`url\``,
        `  ${file}:17:5: missing required key \`name\` in agent_configs[1]`,
      ].join("\n"),
    );
  });

  it("suggests an enum value close to a misspelt one", () => {
    const document = SourceDocument.parse("sandbox:\n  backend: bwarp\n", "t.yaml");
    expect(validateAgainstSchema(document.data, tacticSchema(), document)).toEqual([
      { message: 'sandbox.backend must be one of: auto, bwrap, gvisor, none (got "bwarp")', location: { file: "t.yaml", line: 2, column: 12 }, hint: "did you mean `bwrap`?" },
    ]);
  });

  it("lists the valid keys when no key is close", () => {
    const document = SourceDocument.parse("code_action:\n  zzz: 1\n", "t.yaml");
    expect(validateAgainstSchema(document.data, tacticSchema(), document)).toEqual([
      { message: "unknown key `zzz` in code_action", location: { file: "t.yaml", line: 2, column: 3 }, hint: "valid keys: exec_timeout, max_repairs, max_tool_calls" },
    ]);
  });

  it("names an unknown top-level key and accepts every key of a full tactic", () => {
    const unknown = SourceDocument.parse("name: t\ndescripton: []\n", "t.yaml");
    expect(validateAgainstSchema(unknown.data, tacticSchema(), unknown)).toEqual([
      { message: "unknown key `descripton` at the top level", location: { file: "t.yaml", line: 2, column: 1 }, hint: "did you mean `description`?" },
    ]);
    const full = SourceDocument.parse(
      [
        "name: full",
        "description: d",
        "base: ./b.yaml",
        "packages: [../p]",
        "tactic_type: pkg.tactics:x",
        "agent: a",
        "input: {type: string}",
        "output: {type: object, properties: {x: {type: number}}}",
        'prompt: "{input}"',
        "steps: [{agent: a, prompt: p, as: x}]",
        "code_action: {exec_timeout: 60, max_repairs: 2, max_tool_calls: 20}",
        "sandbox: {backend: auto, memory_limit: 1G, cpu_time: 30, max_processes: 64, file_size: 64M, workspace_size: 256M, output_size: 1M, network: false}",
        "mcp_servers: [{name: docs, url: 'https://x', headers: {A: b}, allowed_tools: [search], prefix: docs_}]",
        "global:",
        "  model_name: m",
        "  model_args: {temperature: 0}",
        "  tools: [t]",
        "  max_interrupt_steps: 3",
        "  max_exception_retry: 1",
        "  api_type: response",
        "  invoker: litellm",
        "  invoker_config: {base_url: 'http://x', api_key_env: K, organization: o}",
        "  proxy: {activate_proxies: [w], deploy_mode: false, cutoff_date: 2024-01-01, exec_env: null, max_output_chars: 5000, truncation_indicator: '...', timeout: 60.0, prompt_template: null, use_cache: true}",
        "  mcp_servers: [{name: fs, command: npx, args: [server], env: {A: b}}]",
        "agent_configs:",
        "  - name: a",
        "    system_prompt_path: pkg.prompts:a",
        "vars: {city: Paris}",
      ].join("\n"),
      "full.yaml",
    );
    expect(validateAgainstSchema(full.data, tacticSchema(), full)).toEqual([]);
  });
});

describe("validation against the package schema", () => {
  const problems = (text: string) => {
    const document = SourceDocument.parse(text, "lllm.yaml");
    return validateAgainstSchema(document.data, packageSchema(), document).map((problem) => `${problem.location?.line}:${problem.location?.column} ${problem.message}`);
  };

  it("accepts the nested and the flat form", () => {
    expect(problems("package: {name: weather, version: 1.0.0}\ndependencies:\n  packages: [../common, ../geo as geo, {path: ../x, alias: x}]\n")).toEqual([]);
    expect(problems("name: weather\nversion: 1.0.0\n")).toEqual([]);
  });

  it("collapses anyOf and oneOf cascades into one line each", () => {
    expect(problems("version: 1.0.0\n")).toEqual(["1:1 the top level must set `package` or `name`"]);
    expect(problems("package: {name: a}\nname: a\n")).toEqual(["1:1 the top level must set only one of `package`, `name`"]);
    expect(problems("name: a\ndependencies:\n  packages:\n    - 3\n    - {alias: x}\n    - ../ok\n")).toEqual([
      "4:7 dependencies.packages[0] must be a string or a mapping (got 3)",
      // the value is a mapping, so the mapping branch is the one it was meant for
      "5:7 missing required key `path` in dependencies.packages[1]",
    ]);
  });
});

describe("the schema files", () => {
  it("describe every property, so editors can show help", () => {
    const missing: string[] = [];
    const visit = (schema: unknown, where: string): void => {
      if (schema === null || typeof schema !== "object") return;
      const record = schema as Record<string, unknown>;
      const properties = record.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [key, property] of Object.entries(properties ?? {})) {
        if (typeof property.description !== "string" && typeof property.$ref !== "string") missing.push(`${where}.${key}`);
      }
      for (const [key, value] of Object.entries(record)) visit(value, `${where}/${key}`);
    };
    for (const schema of [tacticSchema(), packageSchema()]) {
      expect(typeof schema.$id).toBe("string");
      expect(typeof schema.title).toBe("string");
      visit(schema, String(schema.$id));
      // every $ref target carries the description instead
      for (const [name, definition] of Object.entries((schema.definitions ?? {}) as Record<string, Record<string, unknown>>)) {
        if (typeof definition.description !== "string") missing.push(`${String(schema.$id)}#/definitions/${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
