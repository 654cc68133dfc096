import type { ErrorObject } from "ajv";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { schemaValidator, type SchemaName } from "../../src/config/schemaValidator.js";
import { tacticSchema } from "../../src/config/tacticSchema.js";
import { documentationPages, fencedBlocks, readPage } from "../helpers/markdown.js";

/**
 * Every YAML example of the pages parses, and those that are a tactic (or a part of one), a test file or project
 * settings hold only keys and values their JSON Schema allows, as `lllm validate` would read them. Most of them are
 * shown, not run (they need a key or a server), so a renamed key could otherwise live on in a page.
 */

/** Keys only a tactic has at its top level: a block with one of them is a tactic, whatever else it holds. */
const TACTIC_ONLY = ["agent_configs", "tactic_type", "global", "limits", "code_action", "sandbox", "mcp_servers", "remote_agents", "steps"];

/** Which file format a YAML example is, or undefined for one these checks leave alone (a tool, a prompt, turns). */
function formatOf(text: string, data: unknown): SchemaName | undefined {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined;
  const keys = Object.keys(data);
  // A settings file is named in the block's first comment (`# .lllmrc.yaml …`): its keys are a tactic's too.
  if (/^#.*\.lllmrc/.test(text)) return "settings";
  if (keys.includes("cases")) return "test";
  const tacticKeys = Object.keys((tacticSchema() as { properties: object }).properties);
  if (keys.some((key) => TACTIC_ONLY.includes(key)) || keys.every((key) => tacticKeys.includes(key))) return "tactic";
  return undefined;
}

const describeError = (error: ErrorObject): string => `${error.instancePath || "/"} ${error.message ?? ""}${"additionalProperty" in error.params ? ` (\`${String(error.params.additionalProperty)}\`)` : ""}`;

/** The problems of a page's YAML examples: YAML that does not parse, keys or values the format refuses. */
function yamlProblems(page: string, markdown: string): string[] {
  const problems: string[] = [];
  for (const block of fencedBlocks(markdown).filter((candidate) => candidate.info[0] === "yaml")) {
    let data: unknown;
    try {
      data = parse(block.text);
    } catch (error) {
      problems.push(`${page}:${block.line}: not YAML: ${(error as Error).message.split("\n")[0]}`);
      continue;
    }
    const format = formatOf(block.text, data);
    if (!format) continue;
    const validate = schemaValidator(format);
    if (!validate(data)) problems.push(`${page}:${block.line}: not a valid ${format} file: ${(validate.errors ?? []).map(describeError).join("; ")}`);
  }
  return problems;
}

describe("the documentation's YAML examples", () => {
  it("parse, and a tactic, a test file or settings shown holds only what its schema allows", () => {
    const pages = documentationPages();
    expect(pages.flatMap((page) => yamlProblems(page, readPage(page)))).toEqual([]);
    // The checks reach the pages that teach the formats.
    const checked = pages.flatMap((page) => fencedBlocks(readPage(page)).filter((block) => block.info[0] === "yaml").map((block) => formatOf(block.text, parse(block.text))));
    expect(new Set(checked)).toEqual(new Set(["tactic", "test", "settings", undefined]));
  });

  it("fail on a misspelt key of each format and on YAML that does not parse, and leave other YAML alone", () => {
    const page = [
      "```yaml",
      "agent_configs:",
      "  - {name: bot, modle_name: gpt-4o-mini}",
      "```",
      "```yaml",
      "code_action: {exec_timeout: 120, max_repair: 1}",
      "```",
      "```yaml",
      "tactic: t.yaml",
      "cases: [{name: a, input: hi, assert: [{tool_called: x}]}]",
      "```",
      "```yaml",
      "# .lllmrc.yaml",
      "modle: gpt-4o-mini",
      "```",
      "```yaml",
      "a: [unclosed",
      "```",
      "```yaml",
      "# tools/shout.yaml: a tool, not a tactic",
      "name: shout",
      "command: [node, shout.mjs]",
      "```",
    ].join("\n");
    const problems = yamlProblems("example.md", page);
    expect(problems.map((problem) => problem.split(": ").slice(0, 2).join(": "))).toEqual([
      "example.md:1: not a valid tactic file",
      "example.md:5: not a valid tactic file",
      "example.md:8: not a valid test file",
      "example.md:12: not a valid settings file",
      "example.md:16: not YAML",
    ]);
    expect(problems[0]).toContain("`modle_name`");
    expect(problems[1]).toContain("`max_repair`");
    expect(problems[3]).toContain("`modle`");
  });
});
