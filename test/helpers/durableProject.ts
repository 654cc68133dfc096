import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { runCli, type CliResult } from "./runCli.js";
import { runCliInProcess } from "./runCliInProcess.js";
import { startCli, waitUntil, type RunningCli } from "./processTree.js";
import { tempDir, writeTree } from "./tempTree.js";

/**
 * A project for durable-run tests (`lllm run --resume`): a tactic of `rounds` tool rounds against a real local
 * OpenAI-compatible server, whose tools count their calls in a file (`calls.log`), and points where a test stops the
 * real CLI with SIGKILL, each waited on as an event:
 *  - the server holds the model request of a round (`holdModel(round)`), and says when it has it;
 *  - a tool blocks in a call (`blockTool(name, n)`) after counting it and writing `blocked`;
 *  - a tool kills its own process right after its call returned (`killAfter(name, n)`): the outcome is recorded and
 *    the next model request not yet sent;
 *  - a tool blocks in a call until the process gets SIGINT or SIGTERM, and ends with its result after it
 *    (`outlastStop(name, n)`).
 * Round `n` calls `note` (not idempotent: it appends to a file) when n % 3 is 0, else `look` (idempotent: it reads).
 */
export interface DurableProject {
  dir: string;
  home: string;
  /** What the CLI is run with: the tools' folder, the mock's key, LLLM_HOME. */
  env: NodeJS.ProcessEnv;
  server: MockOpenAIServer;
  /** Model requests the server received, held ones included. */
  modelRequests(): number;
  /**
   * Hold the model request made after `round` tool results (until the server closes), or the first request whose
   * messages `when` holds for.
   */
  holdModel(when: number | ((messages: WireMessage[]) => boolean) | undefined): void;
  /** Whether the server holds a request now. */
  holding(): boolean;
  /** Hold every model request `when` matches (not only the first), counting them (`heldCount`). */
  holdEvery(when: ((messages: WireMessage[]) => boolean) | undefined): void;
  heldCount(): number;
  /** Each tool call, as `name n`, in order, across attempts. */
  toolCalls(): string[];
  /** The tactic file of the main tactic (`rounds.yaml`), or of another written with `writeTactic`. */
  tactic(name?: string): string;
  writeTactic(name: string, text: string): string;
  blockTool(name: string, n: number): void;
  /**
   * A tool's call `n` writes `blocked` after counting it, then waits, deaf to the run's abort, for the process's
   * SIGINT or SIGTERM, and ends after it with its result (a call the stop does not cut short), writing `outlasted`.
   */
  outlastStop(name: string, n: number): void;
  killAfter(name: string, n: number): void;
  /** Clear the block and kill marks (before a resume). */
  clearMarks(): void;
  /**
   * Run `lllm args` (default: the main tactic, input `go`) until `name`'s call `n` blocks, SIGKILL it there, and clear
   * the marks: a run that crashed during that call, to resume.
   */
  crashInTool(name: string, n: number, args?: string[]): Promise<void>;
  /** `lllm …` in the project folder, to its end. */
  run(args: string[]): Promise<CliResult>;
  /**
   * `lllm …` in the project folder, to its end, as the CLI's main() in this process (see runCliInProcess). A resume
   * holds its run until its process exits (`holdRun`), and this process does not: a resume that another resume of
   * the same run follows is a spawn (`run`).
   */
  inProcess(args: string[]): Promise<CliResult>;
  /** `lllm …` in the project folder, running. */
  start(args: string[]): RunningCli;
  close(): Promise<void>;
}

/** Dollars per million tokens of the mock's model, so that a run has a cost to compare. */
const PRICE = { input: 3, output: 15 };

const TOOLS = `import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
const dir = process.env.DURABLE_DIR;
async function count(name, n) {
  appendFileSync(path.join(dir, "calls.log"), \`\${name} \${n}\\n\`);
  if (existsSync(path.join(dir, \`block-\${name}-\${n}\`))) {
    writeFileSync(path.join(dir, "blocked"), \`\${name} \${n}\`);
    // Blocks until the process is killed (a timer keeps the event loop, and so the process, alive).
    await new Promise(() => setInterval(() => {}, 60_000));
  }
  if (existsSync(path.join(dir, \`kill-\${name}-\${n}\`))) setImmediate(() => process.kill(process.pid, "SIGKILL"));
  if (existsSync(path.join(dir, \`outlast-\${name}-\${n}\`))) {
    // Deaf to the run's abort (it never looks at its signal), it ends on its own once the process was told to stop:
    // right after lllm's own handler of that signal, which was there first, has aborted the run.
    const stopped = new Promise((resolve) => {
      // A timer keeps the event loop, and so the process, alive until the signal comes.
      const alive = setInterval(() => {}, 60_000);
      const onStop = () => {
        process.off("SIGINT", onStop);
        process.off("SIGTERM", onStop);
        clearInterval(alive);
        setImmediate(resolve);
      };
      process.on("SIGINT", onStop);
      process.on("SIGTERM", onStop);
    });
    writeFileSync(path.join(dir, "blocked"), \`\${name} \${n}\`);
    await stopped;
    writeFileSync(path.join(dir, "outlasted"), \`\${name} \${n}\`);
  }
}
export const note = {
  name: "note",
  description: "Write a note (each call adds one: not idempotent).",
  parameters: { n: { type: "integer" } },
  run: async ({ n }) => {
    await count("note", n);
    appendFileSync(path.join(dir, "notes.txt"), \`note \${n}\\n\`);
    return \`noted \${n}\`;
  },
};
export const look = {
  name: "look",
  description: "Look a value up (calling it twice does no harm).",
  idempotent: true,
  parameters: { n: { type: "integer" } },
  run: async ({ n }) => {
    await count("look", n);
    return \`value \${n * 7}\`;
  },
};
export const stamp = {
  name: "stamp",
  description: "Stamp a value (not idempotent, and declares nothing).",
  parameters: { n: { type: "integer" } },
  run: async ({ n }) => {
    await count("stamp", n);
    return \`stamped \${n}\`;
  },
};
`;

/** The turn the model gives after `round` tool results: a tool call of that round, or the answer after `rounds`. */
export function roundTurn(round: number, rounds: number, options: { agent?: string; tools?: [string, string] } = {}): ScriptedTurn {
  const usage = { prompt_tokens: 1000 + round * 40, completion_tokens: 20 + (round % 5) };
  if (round >= rounds) return { text: `${options.agent ?? "done"}: ${rounds} rounds, last value ${(rounds - 1) * 7}`, usage };
  const [writes, reads] = options.tools ?? ["note", "look"];
  return { tool_calls: [{ id: `call_${options.agent ?? "main"}_${round}`, name: round % 3 === 0 ? writes : reads, arguments: { n: round } }], usage };
}

/** A message of a model request as the mock server received it. */
export interface WireMessage {
  role: string;
  content?: unknown;
}

/** The text of a message, when it is one. */
export const messageText = (message: WireMessage | undefined): string => (typeof message?.content === "string" ? message.content : "");

/**
 * A batch item's model (its input `item K`): `rounds` rounds, calling `note` when the round is a multiple of 3 (not
 * idempotent), else `look`, each call numbered K * 100 + round; then `item K: N rounds`.
 */
export function itemAnswer(rounds: number): (messages: WireMessage[]) => ScriptedTurn {
  const usage = { prompt_tokens: 400, completion_tokens: 25 };
  return (messages) => {
    const item = Number(/item (\d+)/.exec(messageText(messages.find((message) => message.role === "user")))?.[1]);
    const round = messages.filter((message) => message.role === "tool").length;
    if (round >= rounds) return { text: `item ${item}: ${rounds} rounds`, usage };
    return { tool_calls: [{ id: `call_${item}_${round}`, name: round % 3 === 0 ? "note" : "look", arguments: { n: item * 100 + round } }], usage };
  };
}

export async function durableProject(options: { rounds?: number; answer?: (messages: WireMessage[]) => ScriptedTurn | undefined } = {}): Promise<DurableProject> {
  const rounds = options.rounds ?? 30;
  const dir = tempDir("lllm-durable-");
  const home = tempDir("lllm-durable-home-");
  let held: ((messages: WireMessage[]) => boolean) | undefined;
  let holdingNow = false;
  let holdAll: ((messages: WireMessage[]) => boolean) | undefined;
  let heldAll = 0;
  let requests = 0;
  const server = await startMockOpenAIServer({
    handler: async (body) => {
      requests += 1;
      const messages = (body.messages ?? []) as unknown as WireMessage[];
      if (held?.(messages)) {
        held = undefined;
        holdingNow = true;
        await new Promise(() => {});
      }
      if (holdAll?.(messages)) {
        heldAll += 1;
        await new Promise(() => {});
      }
      return options.answer?.(messages) ?? roundTurn(messages.filter((message) => message.role === "tool").length, rounds);
    },
  });
  writeTree(dir, {
    ".lllmrc.yaml": `prices:\n  mock-model: {input: ${PRICE.input}, output: ${PRICE.output}}\n`,
    "pkg/lllm.yaml": "name: durable\n",
    "pkg/tools/counted.mjs": TOOLS,
    "rounds.yaml": `name: rounds
packages: [./pkg]
prompt: "{input}"
global:
  model_name: mock-model
  invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}
  model_args: {max_tokens: 200}
  max_interrupt_steps: ${rounds + 5}
agent_configs:
  - name: worker
    system_prompt: Do the rounds.
    tools: [note, look]
`,
  });
  const env = { DURABLE_DIR: dir, MOCK_KEY: "sk-mock-durable", LLLM_HOME: home };
  const project: DurableProject = {
    dir,
    home,
    env,
    server,
    modelRequests: () => requests,
    holdModel: (when) => {
      held = typeof when === "number" ? (messages) => messages.filter((message) => message.role === "tool").length === when : when;
      holdingNow = false;
    },
    holding: () => holdingNow,
    holdEvery: (when) => {
      holdAll = when;
      heldAll = 0;
    },
    heldCount: () => heldAll,
    toolCalls: () => {
      const file = path.join(dir, "calls.log");
      return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
    },
    tactic: (name = "rounds") => path.join(dir, `${name}.yaml`),
    writeTactic: (name, text) => {
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(file, text.replaceAll("MOCK_URL", server.url));
      return file;
    },
    blockTool: (name, n) => writeFileSync(path.join(dir, `block-${name}-${n}`), ""),
    outlastStop: (name, n) => writeFileSync(path.join(dir, `outlast-${name}-${n}`), ""),
    killAfter: (name, n) => writeFileSync(path.join(dir, `kill-${name}-${n}`), ""),
    clearMarks: () => {
      for (const name of readdirSync(dir)) if (/^(block|kill|outlast)-|^(blocked|outlasted)$/.test(name)) rmSync(path.join(dir, name), { force: true });
      held = undefined;
      holdingNow = false;
    },
    crashInTool: async (name, n, args) => {
      project.blockTool(name, n);
      const attempt = project.start(args ?? ["run", project.tactic(), "--input", "go"]);
      if (!(await waitForFile(path.join(dir, "blocked"), 120_000))) {
        attempt.killTree();
        throw new Error(`\`${name} ${n}\` never blocked: ${attempt.stderr()}`);
      }
      process.kill(attempt.pid, "SIGKILL");
      await attempt.exit();
      project.clearMarks();
    },
    run: (args) => runCli(args, { cwd: dir, env, timeoutMs: 120_000 }),
    inProcess: (args) => runCliInProcess(args, { cwd: dir, env }),
    start: (args) => startCli(args, { cwd: dir, env }),
    close: () => server.close(),
  };
  return project;
}

/** Wait for a file the tools write (`blocked`), as the event a test kills on. */
export function waitForFile(file: string, ms = 60_000): Promise<boolean> {
  return waitUntil(() => existsSync(file), ms);
}
