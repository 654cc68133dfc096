import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";

/** A package of a prompt alone (no code): added without consent. */
export const PROMPT_PACKAGE = {
  "lllm.toml": '[package]\nname = "greet"\nversion = "1.0.0"\n',
  "prompts/system.md": "You greet people by name.",
};

/** A package with a TypeScript tool: its code needs consent. */
export const TOOL_PACKAGE = {
  "lllm.toml": '[package]\nname = "hello"\nversion = "1.0.0"\n',
  "tools/hello.ts":
    'export default { name: "hello", description: "Greet someone.", parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] }, run: ({ who }: { who: string }) => `Hello, ${who}!` };\n',
};

/** A project folder with a tactic that uses `greet`'s prompt and (when `withTool`) `hello`'s tool, and its script. */
export function project(options: { withTool?: boolean } = {}): string {
  const dir = tempDir("lllm-project-");
  writeTree(dir, {
    "tactic.yaml": [
      "name: t",
      'prompt: "{input}"',
      ...(options.withTool ? ["global:", "  tools: [hello.tools:hello]"] : []),
      "agent_configs:",
      "  - name: a",
      "    system_prompt_path: greet.prompts:system",
      "",
    ].join("\n"),
    "script.yaml": options.withTool ? "- tool_calls:\n    - {name: hello, arguments: {who: Ada}}\n- text: greeted\n" : "- text: greeted\n",
  });
  return dir;
}

/** The CLI in `cwd` with its own `$LLLM_HOME`. */
export function lllm(args: string[], options: { cwd: string; home: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  return runCli(args, { cwd: options.cwd, env: { LLLM_HOME: options.home, ...options.env }, timeoutMs: options.timeoutMs ?? 90_000 });
}

/** `lllm` as main(argv) in this process, with its own `$LLLM_HOME`: a spawn's output and exit code, a hundredth of its CPU. */
export function lllmInProcess(args: string[], options: { cwd: string; home: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return runCliInProcess(args, { cwd: options.cwd, env: { LLLM_HOME: options.home, ...options.env } });
}

/** The packages in a home's cache (their folder names), and anything else left in the store (staging folders). */
export function cacheOf(home: string): { packages: string[]; other: string[] } {
  const store = path.join(home, "packages", ".store");
  if (!existsSync(store)) return { packages: [], other: [] };
  const names = readdirSync(store);
  return { packages: names.filter((name) => /^[0-9a-f]{128}$/.test(name)), other: names.filter((name) => !/^[0-9a-f]{128}(?:\.json)?$/.test(name)) };
}

export function writeFile(file: string, content: Buffer | string): string {
  writeFileSync(file, content);
  return file;
}
