import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, messageText, roundTurn, type DurableProject, type WireMessage } from "../helpers/durableProject.js";
import { waitUntil } from "../helpers/processTree.js";

vi.setConfig({ testTimeout: 240_000 });

// A tool's `ctx.sample` is a model call of its agent, paid like the agent's own. A resumed run replays a tool call
// whose outcome it recorded without running the tool, so without asking those samples again: it counts them from
// the record all the same (its cost, its usage, its budget are those of the whole run), and a call cut short that
// runs again gets the recorded answer to a sample it asks again instead of paying for it twice.

/** `ask`: counts its call, asks the agent's model for a summary, then blocks when its block file is there. */
const ASK = `import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
const dir = process.env.DURABLE_DIR;
export const ask = {
  name: "ask",
  description: "Ask for a summary of a value.",
  idempotent: true,
  parameters: { n: { type: "integer" } },
  run: async ({ n }, ctx) => {
    appendFileSync(path.join(dir, "calls.log"), \`ask \${n}\\n\`);
    const summary = await ctx.sample({ systemPrompt: "You summarize.", messages: \`summarize \${n}\`, maxTokens: 50 });
    if (existsSync(path.join(dir, \`block-ask-\${n}\`))) {
      writeFileSync(path.join(dir, "blocked"), \`ask \${n}\`);
      await new Promise(() => setInterval(() => {}, 60_000));
    }
    return \`value \${n * 7} (\${summary.text})\`;
  },
};
`;

const ROUNDS = 12;

interface Sampled {
  project: DurableProject;
  /** The sample requests the server answered, by their text. */
  samples: string[];
}

/** A project whose tactic calls `note` every third round and `ask` (which samples) in the others. */
async function sampledProject(): Promise<Sampled> {
  const samples: string[] = [];
  const project = await durableProject({
    rounds: ROUNDS,
    answer: (messages: WireMessage[]) => {
      if (messageText(messages[0]) !== "You summarize.") return roundTurn(messages.filter((message) => message.role === "tool").length, ROUNDS, { tools: ["note", "ask"] });
      const text = messageText(messages[1]);
      samples.push(text);
      return { text: `summary of ${text.replace("summarize ", "")}`, usage: { prompt_tokens: 3000, completion_tokens: 400 } };
    },
  });
  writeFileSync(path.join(project.dir, "pkg", "tools", "ask.mjs"), ASK);
  writeFileSync(project.tactic(), readFileSync(project.tactic(), "utf8").replace("tools: [note, look]", "tools: [note, ask]"));
  return { project, samples };
}

interface RunJson {
  output: string;
  cost: number;
  usage: { llm_calls: number; prompt_tokens: number; completion_tokens: number; by_agent: Record<string, { cost: number; model_calls: number }> };
}

/** The totals, and what the run's budget counted for its agent. */
const tokens = (json: RunJson): unknown => ({ llm_calls: json.usage.llm_calls, prompt_tokens: json.usage.prompt_tokens, completion_tokens: json.usage.completion_tokens, budget: json.usage.by_agent["worker"]?.model_calls, budgetCost: json.usage.by_agent["worker"]?.cost.toFixed(10) });

let open: DurableProject[] = [];
afterEach(async () => {
  for (const project of open) await project.close();
  open = [];
});

async function uninterrupted(): Promise<{ json: RunJson; requests: number; samples: string[] }> {
  const { project, samples } = await sampledProject();
  open.push(project);
  const whole = await project.run(["run", project.tactic(), "--input", "go", "--json"]);
  expect(whole.code, whole.stderr).toBe(0);
  return { json: JSON.parse(whole.stdout) as RunJson, requests: project.modelRequests(), samples };
}

describe("a resumed run and its tools' ctx.sample", () => {
  it("counts the samples of the tool calls it replays, without asking them again", async () => {
    const whole = await uninterrupted();
    // Asks in rounds 1, 2, 4, 5, 7, 8, 10, 11: each sampled once.
    expect(whole.samples).toEqual(["summarize 1", "summarize 2", "summarize 4", "summarize 5", "summarize 7", "summarize 8", "summarize 10", "summarize 11"]);
    expect(whole.json.usage.llm_calls).toBe(ROUNDS + 1 + 8);
    expect(whole.json.usage.by_agent["worker"]?.model_calls).toBe(ROUNDS + 1 + 8);

    const { project, samples } = await sampledProject();
    open.push(project);
    // Killed while the model has the request after round 6: the samples of rounds 1, 2, 4 and 5 are in the record.
    project.holdModel(6);
    const first = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitUntil(() => project.holding(), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    project.clearMarks();
    expect(samples).toEqual(["summarize 1", "summarize 2", "summarize 4", "summarize 5"]);

    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(whole.json.output);
    expect(tokens(json)).toEqual(tokens(whole.json));
    expect(json.cost).toBeCloseTo(whole.json.cost, 10);
    // No sample asked twice; the model asked once per round across the attempts, and the one held.
    expect(samples).toEqual(whole.samples);
    expect(project.modelRequests()).toBe(whole.requests + 1);
    expect(project.toolCalls().filter((call) => call.startsWith("ask"))).toHaveLength(8);

    // The resumed run's record holds each sample once: `lllm logs` reads the same cost.
    const logs = await project.run(["logs", "--json"]);
    expect(logs.code, logs.stderr).toBe(0);
    const { runs } = JSON.parse(logs.stdout) as { runs: Array<{ cost: number }> };
    expect(runs[0]!.cost).toBeCloseTo(whole.json.cost, 10);
  });

  it("answers the sample of a call cut short from the record when the call runs again", async () => {
    const whole = await uninterrupted();
    const { project, samples } = await sampledProject();
    open.push(project);
    // Killed inside `ask 4`, after its sample was answered (and recorded), before its outcome.
    await project.crashInTool("ask", 4);
    expect(samples).toEqual(["summarize 1", "summarize 2", "summarize 4"]);

    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(whole.json.output);
    // `ask 4` ran twice (it is idempotent); its sample was paid once, and counts once.
    expect(project.toolCalls().filter((call) => call === "ask 4")).toHaveLength(2);
    expect(samples).toEqual(whole.samples);
    expect(tokens(json)).toEqual(tokens(whole.json));
    expect(json.cost).toBeCloseTo(whole.json.cost, 10);
  });
});
