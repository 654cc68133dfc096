import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram, TOP_LEVEL_COMMANDS } from "../../src/cli/main.js";
import { checkCommandWords } from "../../src/cli/checkCommandWords.js";
import { commandPath, HELP_EXAMPLES } from "../../src/cli/helpExamples.js";
import { helpTopics, renderMarkdown } from "../../src/cli/helpTopics.js";
import { documentationPages, fencedBlocks } from "../helpers/markdown.js";
import { BIN, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";

const ESCAPE = "\u001b[";

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

describe("help that teaches", { timeout: 300_000 }, () => {
  it("ends every command's --help with examples", async () => {
    const paths = allCommands(buildProgram()).map(commandPath);
    expect(paths.filter((name) => !HELP_EXAMPLES[name] || HELP_EXAMPLES[name]!.length < 2)).toEqual([]);
    for (const name of paths) {
      const result = await runCliInProcess([...name.split(" ").filter(Boolean), "--help"]);
      expect(result.code, name).toBe(0);
      const examples = result.stdout.slice(result.stdout.lastIndexOf("\nExamples:\n"));
      expect(examples, `lllm ${name} --help`).toMatch(/^\nExamples:\n(  # .+\n  \$ .+\n){2,3}\n?$/);
    }
    // `lllm help COMMAND` is the command's help too.
    expect((await runCliInProcess(["help", "tools", "call"])).stdout).toContain("$ lllm tools call weather.tools:get_weather");
  });

  it("gives examples that name real files and run as written", () => {
    for (const [name, examples] of Object.entries(HELP_EXAMPLES)) {
      for (const [command] of examples) {
        if (name !== "") expect(command, name).toContain(name === "logs replay" ? "lllm " : `lllm ${name}`);
        for (const file of command.match(/packages-example\/[\w./-]+/g) ?? []) expect(existsSync(path.join(ROOT, file)), `${file} in: ${command}`).toBe(true);
      }
    }
    // The examples that need no key, network or sandbox are run, from a clone, as a user would paste them.
    const bin = tempDir();
    writeFileSync(path.join(bin, "lllm"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
    chmodSync(path.join(bin, "lllm"), 0o755);
    const offline: Array<[string, number]> = [["", 0], ["run", 0], ["validate", 0], ["validate", 1], ["tools list", 0], ["tools show", 0], ["tools show", 1], ["tools call", 0], ["proxy list", 0], ["proxy docs", 0], ["proxy call", 0], ["models", 0], ["help", 0], ["test", 0]];
    for (const [name, index] of offline) {
      const command = HELP_EXAMPLES[name]![index]![0];
      const result = spawnSync("bash", ["--norc", "--noprofile", "-c", command], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: tempDir(), NO_COLOR: "1" }, timeout: 60_000 });
      expect(result.status, `${command}\n${result.stderr}`).toBe(0);
      expect((result.stdout + result.stderr).trim(), command).not.toBe("");
    }
  });

  it("prints each topic's page of docs/, cut for a terminal", async () => {
    const topics = helpTopics();
    for (const [topic, { page, what }] of Object.entries(topics)) {
      const result = await runCliInProcess(["help", topic]);
      expect(result.code, topic).toBe(0);
      const lines = result.stdout.split("\n");
      expect(lines[0]).toBe(`lllm help ${topic}: ${what}`);
      expect(lines.at(-2)).toBe(`The page: ${path.join(ROOT, "docs", page)}`);
      const markdown = readFileSync(path.join(ROOT, "docs", page), "utf8");
      // Every line of the page's code blocks, indented; no Markdown link, comment or table escape left in the prose.
      for (const block of fencedBlocks(markdown)) for (const line of block.text.split("\n")) expect(lines, `${topic}: ${line}`).toContain(`    ${line}`);
      const prose = lines.filter((line) => !line.startsWith("    "));
      expect(prose.filter((line) => /\]\([^)]*\)|<!--|&lt;|\\\|/.test(line)), topic).toEqual([]);
      expect(lines.length, topic).toBeGreaterThan(10);
    }
    // Links say where they lead; the tables' escapes read as the characters they stand for.
    expect((await runCliInProcess(["help", "batch"])).stdout).toContain("Through the providers' batch APIs, at half the price: Provider batch (lllm help provider-batch).");
    expect((await runCliInProcess(["help", "cli"])).stdout).toMatch(/\| `--inputs <file>` \| the dataset: .* a FIFO such as <\(command\), read once/);
  });

  it("lists every page of docs/ as a topic, the index's words beside each, and keeps the topics of before", async () => {
    const topics = helpTopics();
    const pages = documentationPages().filter((page) => page.startsWith("docs/") && page !== "docs/README.md");
    expect(Object.values(topics).map((topic) => `docs/${topic.page}`).sort()).toEqual(pages.sort());
    expect(Object.keys(topics)).toEqual(expect.arrayContaining(["getting-started", "tactics", "packages", "proxies", "code-action", "batch", "testing", "cli", "error-codes"]));
    const all = await runCliInProcess(["help"]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain("Usage: lllm");
    for (const [topic, { what }] of Object.entries(topics)) expect(all.stdout).toContain(`  ${topic.padEnd(Math.max(...Object.keys(topics).map((name) => name.length)) + 2)}${what}\n`);
    const wrong = await runCliInProcess(["help", "tacticz"]);
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stderr).toContain("no help topic or command `tacticz`: did you mean `tactics`?");
    // A sub-command's typo is offered the sub-command, not only its parent.
    expect((await runCliInProcess(["help", "tools", "cal"])).stderr).toContain("no help topic or command `tools cal`: did you mean `tools call`?");
    expect((await runCliInProcess(["help", "logs", "shwo"])).stderr).toContain("did you mean `logs show`?");
  });

  it("takes a page added to the index as a topic, named after its file", () => {
    expect(helpTopics("# Index\n\n- [Serving](serve.md): lllm serve\n- [Keys](reference/keys.md): every key\nnot a page line [x](y.md): z\n")).toEqual({
      serve: { page: "serve.md", what: "lllm serve" },
      keys: { page: "reference/keys.md", what: "every key" },
    });
  });

  it("renders links, anchors, comments and table escapes for a terminal", () => {
    const plain = { bold: (text: string) => `*${text}*`, dim: (text: string) => text };
    const markdown = '<!-- generated -->\n## Title\n\nSee [Batch](batch.md#resume), [here](#title), [the spec](https://example.com/spec) and **this**.\n<a id="x"></a>A \\| B &lt;file>\n\n```sh run\nlllm run [x](y.md)\n```\n';
    expect(renderMarkdown(markdown, plain, { batch: { page: "batch.md", what: "" } })).toBe("*Title*\n\nSee Batch (lllm help batch), here, the spec (https://example.com/spec) and *this*.\nA | B <file>\n\n    lllm run [x](y.md)");
  });
});

describe("words that name no command", { timeout: 180_000 }, () => {
  it("an unknown command is a usage error with --help too (not the program's help, exit 0), with the closest command", async () => {
    for (const args of [["rn", "--help"], ["rn"], ["--verbose", "rn", "-h"]]) {
      const result = await runCliInProcess(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stdout, args.join(" ")).toBe("");
      expect(result.stderr, args.join(" ")).toContain("lllm: error: unknown command 'rn'\n(did you mean `run`?)");
    }
    // A subcommand too: `tools lst --help` is not `tools --help`.
    const nested = await runCliInProcess(["tools", "lst", "--help"]);
    expect(nested.code, nested.stderr).toBe(2);
    expect(nested.stderr).toContain("lllm: error: unknown command 'tools lst'\n(did you mean `list`?)");
    // Nothing close: said so plainly; `--json` still gets one JSON object.
    const far = await runCliInProcess(["zzzzzz", "--help", "--json"]);
    expect(far.code, far.stderr).toBe(2);
    expect(far.stderr).toContain("lllm: error: unknown command 'zzzzzz'\n(run with --help for usage)");
    expect(JSON.parse(far.stdout)).toMatchObject({ error: { code: "usage" } });
    // Arguments and flag values are not commands.
    expect((await runCliInProcess(["--env-file", "/dev/null", "help", "run"])).code).toBe(0);
    expect((await runCliInProcess(["logs", "-n", "3", "path"])).code).toBe(0);
  });

  it("defines only the command a start names, which then reads as in the whole tree", () => {
    const whole = buildProgram();
    expect(whole.commands.map((command) => command.name()).sort()).toEqual([...TOP_LEVEL_COMMANDS].sort());
    for (const top of whole.commands) {
      const alone = buildProgram({ only: top.name() });
      expect(alone.commands.map((command) => command.name())).toEqual([top.name()]);
      // Every option, argument and subcommand, and the help of each (the global options listed, the examples).
      const described = (program: Command): string[] => allCommands(program).map((command) => `${commandPath(command)}\n${command.helpInformation()}`);
      expect(described(alone).slice(1)).toEqual(described(whole).filter((text) => text.startsWith(`${top.name()} `) || text.startsWith(`${top.name()}\n`)));
    }
  });

  it("takes the names from the command tree, so a command added later is known and suggested", () => {
    const program = buildProgram().exitOverride();
    // A name no command has (`serve` was this one until lllm serve came).
    program.command("frobnicate").description("a command added after this test was written");
    for (const command of program.commands) command.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    expect(() => checkCommandWords(program, ["frobnicate", "--help"])).not.toThrow();
    expect(() => checkCommandWords(program, ["frobnicat", "--help"])).toThrow("unknown command 'frobnicat'\n(did you mean `frobnicate`?)");
  });

  it("`lllm -v` alone says that -v is --verbose and the version is -V", async () => {
    const result = await runCliInProcess(["-v"]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm: error: no command given: -v is --verbose (with a command: lllm -v run …); the version is lllm -V (--version)");
    const version = await runCliInProcess(["-V"]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("lists --no-color among the global flags", async () => {
    for (const args of [["--help"], ["run", "--help"]]) {
      const result = await runCliInProcess(args);
      expect(result.stdout, args.join(" ")).toMatch(/^ {2}--no-color +disable colour \(NO_COLOR is honoured too\)$/m);
    }
  });
});

describe("colour", { timeout: 180_000 }, () => {
  const tmux = new Tmux();
  afterAll(() => tmux.kill());
  const missing = ["validate", "no-such-tactic.yaml"];

  it("is off in a pipe, on with FORCE_COLOR, and off again with NO_COLOR or --no-color", async () => {
    const plain = await runCli(missing, { env: { NO_COLOR: undefined } });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toContain("lllm: error:");
    expect(plain.stderr).not.toContain(ESCAPE);

    const forced = await runCli(missing, { env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(forced.stderr).toContain(`${ESCAPE}31mlllm: error:`);
    const help = await runCli(["schema", "--help"], { env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(help.stdout).toContain(`${ESCAPE}1mExamples:`);

    for (const [env, args] of [[{ NO_COLOR: "1", FORCE_COLOR: "1" }, missing], [{ NO_COLOR: undefined, FORCE_COLOR: "1" }, ["--no-color", ...missing]], [{ NO_COLOR: undefined, FORCE_COLOR: "0" }, missing]] as const) {
      const result = await runCli([...args], { env: { ...env } });
      expect(result.stderr, JSON.stringify(env)).toContain("lllm: error:");
      expect(result.stderr, JSON.stringify(env)).not.toContain(ESCAPE);
    }
  });

  it("is on at a terminal, and off there with NO_COLOR, --no-color or FORCE_COLOR=0", async () => {
    const home = tempDir();
    const cases: Array<[string[], Record<string, string>, boolean]> = [
      [missing, {}, true],
      [["schema", "--help"], {}, true],
      [missing, { NO_COLOR: "1" }, false],
      [["--no-color", ...missing], {}, false],
      [missing, { FORCE_COLOR: "0" }, false],
    ];
    for (const [args, env, coloured] of cases) {
      const name = tmux.startLllm(args, { LLLM_HOME: home, ...env }, ROOT);
      await tmux.until(name, (text) => /EXIT=\d+/.test(text), `lllm ${args.join(" ")}`);
      expect(tmux.screen(name, true).includes(ESCAPE), `lllm ${args.join(" ")} with ${JSON.stringify(env)}`).toBe(coloured);
    }
  });
});
