import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { BIN, ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { startMockOpenAIServer, type MockOpenAIServer, type MockOpenAIServerOptions } from "../../src/testing/index.js";

// The one home of temporary folders in tests (removed after each file, or by removeTempDirs()).
export { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { tempDir } from "../helpers/tempTree.js";

/** The last user message of a chat request: what the item's prompt became. */
export function lastUserText(body: { messages?: Array<Record<string, unknown>> }): string {
  const user = (body.messages ?? []).filter((message) => message.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : "";
}

/** A mock server answering `echo: <prompt>`, and a tactic pointing at it, in a fresh folder with its own LLLM_HOME. */
export async function echoSetup(options: { prompt?: string; delayMs?: number; usage?: { prompt_tokens: number; completion_tokens: number }; server?: MockOpenAIServerOptions } = {}): Promise<{ server: MockOpenAIServer; dir: string; home: string; tactic: string; answered: () => number; concurrent: number[]; env: NodeJS.ProcessEnv }> {
  let answered = 0;
  let inFlight = 0;
  /** For each answered request, how many were being answered at once when it arrived (itself included). */
  const concurrent: number[] = [];
  const server = await startMockOpenAIServer({
    handler: async (body) => {
      inFlight += 1;
      concurrent.push(inFlight);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      inFlight -= 1;
      answered += 1;
      return { text: `echo: ${lastUserText(body)}`, usage: options.usage ?? { prompt_tokens: 10, completion_tokens: 5 } };
    },
    ...options.server,
  });
  const dir = tempDir();
  const home = path.join(dir, "home");
  const tactic = path.join(dir, "echo.yaml");
  writeFileSync(tactic, `name: echo\nprompt: ${JSON.stringify(options.prompt ?? "{input}")}\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
  return { server, dir, home, tactic, answered: () => answered, concurrent, env: { LLLM_HOME: home, MOCK_KEY: "sk-mock-batch", LLLM_RETRY_DELAY_MS: "20" } };
}

export function batch(args: string[], env: NodeJS.ProcessEnv, options: { input?: string; timeoutMs?: number; cwd?: string } = {}): Promise<CliResult> {
  return runCli(["batch", ...args], { env, timeoutMs: options.timeoutMs ?? 120_000, ...(options.input !== undefined ? { input: options.input } : {}), ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
}

/**
 * `batch` as the CLI's main() in this process (`runCliInProcess`): for what does not depend on being a process of its
 * own (error messages, a batch against a mock server, reading its results). No standard input; calls must not
 * overlap. What a process is the point of (stdin, signals and the runs after them, stdout itself) uses `batch`.
 */
export function batchInProcess(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Promise<CliResult> {
  return runCliInProcess(["batch", ...args], { env, ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
}

/** The CLI as a child this test can signal. */
export function spawnBatch(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<CliResult>; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, "batch", ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

/** One line of a batch's output, as the CLI writes it. */
/** One line of a batch's output, as the user reads it (snake_case JSON). */
export interface ResultLine {
  id: string;
  status: "ok" | "error";
  output: unknown;
  error: { code: string; message: string } | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; llm_calls: number };
  cost: number | null;
  run_id: string | null;
  duration_ms: number;
}

export function readResults(file: string): ResultLine[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, "utf8");
  if (text !== "" && !text.endsWith("\n")) throw new Error(`${file} ends with a torn line`);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as ResultLine);
}

/**
 * How many whole lines a results file has so far: for polling while a batch writes it (a reader can meet the last
 * line half written, which `readResults` rightly reports as torn).
 */
export function wholeLines(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0;
}

export function parseLines(text: string): ResultLine[] {
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as ResultLine);
}

/** Resolve once `check` holds, polling (for a condition only another process can make true). */
export async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
