import { readFileSync } from "node:fs";
import path from "node:path";
import type { Command, Option } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { helpTopics } from "../../src/cli/helpTopics.js";
import { scaffoldPackage } from "../../src/init/scaffoldPackage.js";
import { TEMPLATES } from "../../src/init/packageTemplates.js";
import { codeSpans, documentationPages, fencedBlocks, readPage } from "../helpers/markdown.js";
import { ROOT } from "../helpers/runCli.js";
import { lllmCommands } from "../helpers/shellWords.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * Every `lllm …` command a page shows, in its shell blocks and its code spans, names a command that exists and only
 * options that command (or a parent) has; `lllm help X` names a topic or a command. The examples marked runnable run
 * (examples.test.ts); this reaches the others, those that need a key, a server or a machine of their own, so a
 * renamed or removed flag cannot live on in a page.
 */

const SHELL_BLOCKS = new Set(["sh", "bash", "shell", "console", ""]);

/** A word that stands for something the reader fills in: `TACTIC`, `COMMAND`, `<dir>`, `…`. */
const isPlaceholder = (word: string): boolean => /^[A-Z][A-Z0-9_]*$/.test(word) || /…|\.\.\.|^[<[]/.test(word);

/** The options a command accepts: its own, its parents' (lllm's global options), and commander's --help. */
function optionsOf(command: Command): Map<string, Option | undefined> {
  const options = new Map<string, Option | undefined>([["--help", undefined], ["-h", undefined]]);
  for (let at: Command | null = command; at; at = at.parent) {
    for (const option of at.options) for (const flag of [option.long, option.short]) if (flag) options.set(flag, option);
  }
  return options;
}

/** What is wrong with `lllm WORDS` as the program reads it, or undefined. */
function commandProblem(words: readonly string[], program: Command, topics: ReadonlySet<string>): string | undefined {
  let command = program;
  let positionals = 0;
  for (let at = 0; at < words.length; at++) {
    const word = words[at]!;
    if (word === "--") return undefined;
    if (word.startsWith("-") && word !== "-") {
      // `--max-cost/--max-tokens` in prose: one of these options.
      const flags = word.split("=")[0]!.split("/");
      const options = optionsOf(command);
      const unknown = flags.find((flag) => !options.has(flag));
      if (unknown) return `\`lllm ${commandName(command)}\` has no option ${unknown}`;
      const option = options.get(flags[0]!);
      // Its value is the next word, whatever it looks like (`--max-cost -1` shows a mistake on purpose).
      if (option && !word.includes("=") && (option.required || (option.optional && !words[at + 1]?.startsWith("-")))) at++;
      continue;
    }
    if (isPlaceholder(word)) return undefined; // `lllm COMMAND --help`: nothing more to check
    const sub = positionals === 0 ? command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word)) : undefined;
    if (sub) {
      command = sub;
      continue;
    }
    if (command.commands.length > 0 && command.registeredArguments.length === 0) return `\`lllm ${commandName(command)}\` has no command \`${word}\``.replace("lllm  ", "lllm ");
    if (command.name() === "help" && positionals === 0 && !topics.has(word) && !program.commands.some((candidate) => candidate.name() === word)) return `\`lllm help\` has no topic or command \`${word}\``;
    positionals++;
  }
  return undefined;
}

function commandName(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/** The problems of the `lllm …` commands of a Markdown page: its shell blocks' and its code spans'. */
function pageProblems(page: string, markdown: string, program: Command, topics: ReadonlySet<string>): string[] {
  const shown: Array<{ line: number; text: string }> = [];
  for (const block of fencedBlocks(markdown)) {
    if (SHELL_BLOCKS.has(block.info[0] ?? "")) block.text.split("\n").forEach((text, index) => shown.push({ line: block.line + 1 + index, text }));
  }
  shown.push(...codeSpans(markdown));
  const problems: string[] = [];
  for (const { line, text } of shown) {
    for (const words of lllmCommands(text)) {
      const problem = commandProblem(words, program, topics);
      if (problem) problems.push(`${page}:${line}: lllm ${words.join(" ")}: ${problem}`);
    }
  }
  return problems;
}

describe("the lllm commands the documentation shows", () => {
  const program = buildProgram();
  const topics = new Set(Object.keys(helpTopics()));

  it("name real commands, options and help topics, on every page", () => {
    const problems = documentationPages().flatMap((page) => pageProblems(page, readPage(page), program, topics));
    expect(problems).toEqual([]);
  });

  it("and in the README of every package `lllm init` makes", () => {
    for (const template of TEMPLATES) {
      const dir = path.join(tempDir("lllm-init-"), "pkg");
      scaffoldPackage({ dir, template, lllmRoot: ROOT });
      const readme = readFileSync(path.join(dir, "README.md"), "utf8");
      expect(pageProblems(`lllm init --template ${template}: README.md`, readme, program, topics)).toEqual([]);
      expect(fencedBlocks(readme).flatMap((block) => lllmCommands(block.text)).length, template).toBeGreaterThan(3);
    }
  });

  it("fail on an unknown command, option or topic, and read quotes, pipes and placeholders as a shell would", () => {
    const page = [
      "```sh",
      "lllm run t.yaml --modle gpt-4o   # a typo",
      "lllm tools calll get_weather",
      "echo hi | LLLM_HOME=/tmp/h npx lllm run t.yaml --input '--not a flag' -p . && lllm help batchs",
      "lllm COMMAND --whatever",
      "lllm run t.yaml --max-cost -1 --var a=b --json; lllm logs prune --status error --older-than 1d",
      "lllm run t.yaml --max-cost/--max-tokens 1 --verbose/--quiet",
      "lllm mcp tools \"npx -y @modelcontextprotocol/server-everything\"",
      "```",
      "",
      "Prose: `lllm validate --jsn` and `lllm logs show|replay`, over a line: `lllm tools list",
      "--quiet`.",
    ].join("\n");
    expect(pageProblems("example.md", page, program, topics)).toEqual([
      "example.md:2: lllm run t.yaml --modle gpt-4o: `lllm run` has no option --modle",
      "example.md:3: lllm tools calll get_weather: `lllm tools` has no command `calll`",
      "example.md:4: lllm help batchs: `lllm help` has no topic or command `batchs`",
      "example.md:7: lllm run t.yaml --max-cost/--max-tokens 1 --verbose/--quiet: `lllm run` has no option --quiet",
      "example.md:11: lllm validate --jsn: `lllm validate` has no option --jsn",
      "example.md:11: lllm tools list --quiet: `lllm tools list` has no option --quiet",
    ]);
  });
});
