import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { startMockOpenAIServer, type MockBatchJobs, type MockBatchOptions, type MockOpenAIServer } from "../../src/testing/index.js";
import { waitUntil } from "../helpers/waitUntil.js";
import type { MockRequestBody } from "../../src/testing/index.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";

/** Usage of every mock answer: priced at gpt-4o-mini's batch price, $0.075 + $0.30 per million. */
export const TURN_USAGE = { prompt_tokens: 1000, completion_tokens: 100 };
/** What one item of the three-round tactic costs at gpt-4o-mini's batch price (half its live price). */
export const ITEM_BATCH_COST = 3 * ((1000 * 0.075 + 100 * 0.3) / 1_000_000);

/** How many tool results a request carries (OpenAI's `tool` messages, Anthropic's `tool_result` blocks, Gemini's `functionResponse` parts). */
export function toolResultsIn(body: MockRequestBody): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== "object" || value === null) return;
    const record = value as Record<string, unknown>;
    if (record["role"] === "tool" && typeof record["content"] === "string") found.push(record["content"]);
    if (record["type"] === "tool_result") found.push(typeof record["content"] === "string" ? record["content"] : JSON.stringify(record["content"]));
    if (typeof record["functionResponse"] === "object" && record["functionResponse"] !== null) found.push(JSON.stringify((record["functionResponse"] as { response?: unknown }).response));
    for (const [key, inner] of Object.entries(record)) if (key !== "functionResponse") visit(inner);
  };
  visit(body["messages"] ?? body["contents"]);
  return found;
}

/** The item's question (`q7`) in a request of any of the three formats. */
export function questionIn(body: MockRequestBody): string {
  return /\bq\d+\b/.exec(JSON.stringify(body["messages"] ?? body["contents"]))?.[0] ?? "?";
}

/**
 * The three-round agent: the model calls `add` twice (one round each), then answers with the last result.
 * The answer names the item's question, so a test sees every item got its own answers.
 */
export function threeRounds(body: MockRequestBody): ScriptedTurn {
  const results = toolResultsIn(body);
  const question = questionIn(body);
  const usage = TURN_USAGE;
  if (results.length === 0) return { tool_calls: [{ name: "add", arguments: { a: 1, b: 2 } }], usage };
  if (results.length === 1) return { tool_calls: [{ name: "add", arguments: { a: lastNumber(results[0]!), b: 10 } }], usage };
  return { text: `${question}: ${lastNumber(results[1]!)}`, usage };
}

export interface ProviderBatchSetup {
  dir: string;
  home: string;
  tactic: string;
  inputs: string;
  out: string;
  env: NodeJS.ProcessEnv;
}

/** A package with the `add` tool and a tactic whose agent uses it with `model` (and `modelArgs`, YAML flow), over `count` items. */
export function providerBatchProject(options: { model: string; invokerConfig?: string; modelArgs?: string; count: number; extraEnv?: NodeJS.ProcessEnv; extraTools?: string[]; idempotent?: boolean }): ProviderBatchSetup {
  const dir = tempDir();
  const home = path.join(dir, "home");
  const tools = ["kit.tools:add", ...(options.extraTools ?? [])].join(", ");
  writeTree(dir, {
    "kit/lllm.toml": '[package]\nname = "kit"\nversion = "1.0.0"\n',
    // Each call is noted in $CALLS_FILE when it is set: a test counts how many times the tool really ran. From the
    // $HOLD_AT-th call on, a call is noted `held` and never returns: a test kills lllm while tools run.
    "kit/tools/add.mjs": [
      'import { appendFileSync, existsSync, readFileSync } from "node:fs";',
      "const runs = () => (existsSync(process.env.CALLS_FILE) ? readFileSync(process.env.CALLS_FILE, 'utf8').split('\\n').filter((line) => /^\\d/.test(line)).length : 0);",
      'const run = ({ a, b }) => {',
      '  if (!process.env.CALLS_FILE) return String(a + b);',
      // One write per call (a reader never sees a held call without its mark).
      '  const held = process.env.HOLD_AT !== undefined && runs() + 1 >= Number(process.env.HOLD_AT);',
      '  appendFileSync(process.env.CALLS_FILE, `${a}+${b}${held ? " held" : ""}\\n`);',
      '  return held ? new Promise(() => {}) : String(a + b);',
      '};',
      // Adding twice does no harm: a call cut short by a kill runs again (unless a test says otherwise).
      `export const add = { name: "add", description: "Adds two numbers.", idempotent: ${options.idempotent ?? true}, parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }, run };`,
      "",
    ].join("\n"),
    "tactic.yaml": `name: adder\npackages: [./kit]\nagent_configs:\n  - name: bot\n    model_name: ${options.model}\n${options.invokerConfig ? `    invoker_config: ${options.invokerConfig}\n` : ""}${options.modelArgs ? `    model_args: ${options.modelArgs}\n` : ""}    system_prompt: Add.\n    tools: [${tools}]\n${options.extraTools?.includes("agent:helper") ? `  - name: helper\n    description: Helps.\n    model_name: ${options.model}\n${options.invokerConfig ? `    invoker_config: ${options.invokerConfig}\n` : ""}    system_prompt: Help.\n` : ""}`,
  });
  const inputs = path.join(dir, "items.txt");
  writeFileSync(inputs, Array.from({ length: options.count }, (_, index) => `q${index + 1}`).join("\n"));
  return { dir, home, tactic: path.join(dir, "tactic.yaml"), inputs, out: path.join(dir, "out.jsonl"), env: { LLLM_HOME: home, LLLM_RETRY_DELAY_MS: "20", ...options.extraEnv } };
}

/** The key the OpenAI mock wants on every route (the projects pass it as `MOCK_KEY`). */
export const OPENAI_BATCH_KEY = "sk-mock-provider-batch";

/** An OpenAI mock answering the three-round agent, live and in batch jobs; every route wants `OPENAI_BATCH_KEY`. */
export async function openAIBatchServer(batch: MockBatchOptions = {}): Promise<MockOpenAIServer> {
  return startMockOpenAIServer({ handler: (body) => threeRounds(body), batch, apiKey: OPENAI_BATCH_KEY });
}

/**
 * The cost in the summary line that ends a batch (`1000 ok, 0 failed in 5.3 s; 3,300,000 tokens, $0.32; batch …`),
 * checked against `expected` to its two significant digits: the live price is twice the batch price, far outside.
 */
export function expectSummaryCost(stderr: string, okCount: number, expected: number): void {
  const summary = new RegExp(`${okCount} ok, 0 failed in [0-9.]+ s; [0-9,]+ tokens, \\$([0-9.]+);`).exec(stderr);
  expect(summary, stderr.slice(-2000)).not.toBeNull();
  expect(Math.abs(Number(summary![1]) - expected) / expected).toBeLessThan(0.03);
}

/** How many times the `add` tool really ran (it notes each call in $CALLS_FILE). */
export function toolRuns(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => /^\d/.test(line)).length : 0;
}

/** The last number of a tool result's text (whatever lllm wraps it in). */
function lastNumber(text: string): number {
  return Number(/(\d+)\D*$/.exec(text)?.[1] ?? NaN);
}

/**
 * Kill a running `lllm batch --provider-batch` (SIGKILL) while its round-2 job runs at the provider: once the mock
 * has made that job and lllm has said it submitted it (it says so once it has recorded the job). From the moment the
 * job exists, checked in this process, `options` (the mock's, shared) holds every job back, so that no busy machine
 * can let it end and the next round start before the kill; afterwards the jobs end after `options.delayMs` again.
 */
export async function killDuringRoundTwo(run: { child: ChildProcess; stderr: () => string; done: Promise<unknown> }, jobs: MockBatchJobs, options: MockBatchOptions, provider: string): Promise<void> {
  const delayMs = options.delayMs;
  const made = await waitUntil(() => {
    if (jobs.count >= 2) options.delayMs = 3_600_000;
    return jobs.count >= 2;
  }, 60_000);
  expect(made, run.stderr()).toBe(true);
  const said = await waitUntil(() => (run.stderr().match(new RegExp(`submitted ${provider} batch job`, "g")) ?? []).length === 2, 60_000);
  expect(said, run.stderr()).toBe(true);
  run.child.kill("SIGKILL");
  await run.done;
  expect(jobs.count).toBe(2);
  options.delayMs = delayMs;
}
