import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { commandPath, HELP_EXAMPLES } from "../../src/cli/helpExamples.js";
import { HELP_TOPICS } from "../../src/cli/helpTopics.js";
import { BIN, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";

const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
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
      const result = spawnSync("bash", ["--norc", "--noprofile", "-c", command], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, LLLM_HOME: tempDir(), NO_COLOR: "1" }, timeout: 60_000 });
      expect(result.status, `${command}\n${result.stderr}`).toBe(0);
      expect((result.stdout + result.stderr).trim(), command).not.toBe("");
    }
  });

  it("prints each topic's guide from the README's own text", async () => {
    const plain = (text: string): string => text.replaceAll("**", "");
    for (const topic of Object.keys(HELP_TOPICS)) {
      expect(README, topic).toContain(`<!-- help:${topic} -->`);
      const result = await runCliInProcess(["help", topic]);
      expect(result.code, topic).toBe(0);
      const lines = result.stdout.split("\n");
      expect(lines[0]).toBe(`lllm help ${topic}: ${HELP_TOPICS[topic]}`);
      expect(lines.at(-2)).toMatch(/^More in the README, section "[^"]+"\.$/);
      const body = lines.slice(1, -2).filter((line) => line.trim() !== "");
      expect(body.length, topic).toBeGreaterThan(5);
      for (const line of body) expect(plain(README), `${topic}: ${line}`).toContain(line.startsWith("    ") ? line.slice(4) : line);
    }
  });

  it("lists the topics, and answers an unknown one with the closest", async () => {
    const all = await runCliInProcess(["help"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("Usage: lllm");
    for (const topic of Object.keys(HELP_TOPICS)) expect(all.stdout).toContain(`  ${topic}`);
    const wrong = await runCliInProcess(["help", "tacticz"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("no help topic or command `tacticz`: did you mean `tactics`?");
  });
});

describe("colour", { timeout: 180_000 }, () => {
  const tmux = new Tmux();
  afterAll(() => tmux.kill());
  const missing = ["validate", "no-such-tactic.yaml"];

  it("is off in a pipe, on with FORCE_COLOR, and off again with NO_COLOR or --no-color", async () => {
    const plain = await runCli(missing, { env: { NO_COLOR: undefined } });
    expect(plain.code).toBe(2);
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
