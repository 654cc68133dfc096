import type { Agent } from "../agent/index.js";
import { formatTemplate, Prompt, templatePlaceholders } from "../prompts/index.js";
import type { ProxyManager } from "../proxies/index.js";
import { PythonKernel } from "../sandbox/index.js";
import { notebookParser, type NotebookReply } from "./notebookParser.js";
import type { RanCell } from "./notebookFile.js";
import { patternAgent, patternAgentName } from "./patternAgent.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { programSandbox } from "./programSandbox.js";
import { callApiKernelOptions, PROXY_DEFAULTS } from "./proxyTools.js";
import type { RunScope } from "./RunScope.js";
import type { RunOptions } from "./TacticRun.js";

/** The placeholder a notebook's system prompt may use for the API directory (Step 16). */
export const API_DIRECTORY = "api_directory";

/** Model turns of a notebook unless `notebook.max_steps` says otherwise (Step 16's `max_steps=8`). */
export const DEFAULT_NOTEBOOK_STEPS = 8;

/** Step 16's instructions, appended to the agent's system prompt; the proxy block (if any) lists the APIs. */
export const NOTEBOOK_INSTRUCTIONS = `You are working in a Python notebook.

- Write code in <python_cell>...</python_cell> tags and notes in <markdown_cell>...</markdown_cell> tags.
- Cells run in order and variables persist between turns. Use print() to see values.`;
const CALL_API_LINE = "\n- Call the data APIs with CALL_API(path, params).";
const END_LINE = "\n- When you are done, write a final <markdown_cell> summary followed by <TERMINATE_NOTEBOOK>.";

/** What a notebook run gives: Step 16's text (every cell, tagged), and the cells with their outputs. */
export interface NotebookRun {
  output: string;
  cells: RanCell[];
}

/**
 * `tactic_type: notebook` (seed 000, Step 16): the agent writes cells; its Python cells run in one persistent
 * kernel (with CALL_API when the agent has proxies); their outputs go back as `Cell outputs:`, until the agent
 * ends with <TERMINATE_NOTEBOOK> or `max_steps` turns are used. `cells` fills as the run goes, so a failed run
 * can still be written out.
 */
export async function runNotebookPattern(
  prepared: PreparedTactic,
  agents: Map<string, Agent>,
  vars: Record<string, unknown>,
  options: RunOptions & { scope: RunScope; proxies?: ProxyManager | undefined; cells: RanCell[] },
): Promise<NotebookRun> {
  const { config } = prepared.tactic;
  const base = patternAgent(prepared, agents);
  // By its name in the tactic: the built agent's name has the run's prefix inside a tactic used as a tool.
  const proxyConfig = prepared.agents.find((agent) => agent.name === patternAgentName(prepared))?.config.proxy;
  const { isolation } = await programSandbox(prepared, "the notebook pattern");
  const manager = options.proxies;
  const kernel = await PythonKernel.start({
    ...(manager ? callApiKernelOptions(manager) : {}),
    maxOutputChars: proxyConfig?.max_output_chars ?? PROXY_DEFAULTS.max_output_chars,
    truncationIndicator: proxyConfig?.truncation_indicator ?? PROXY_DEFAULTS.truncation_indicator,
    timeout: proxyConfig?.timeout ?? PROXY_DEFAULTS.timeout,
    isolation,
  });
  options.scope.defer(() => kernel.close());

  const analyst = notebookAgent(base, Boolean(manager));
  // Step 16's own system prompt ends in `{api_directory}`: every endpoint of the agent's proxies, empty without any.
  const promptArgs = { [API_DIRECTORY]: apiDirectory(analyst, manager), ...vars };
  const taskTurn = new Prompt({ path: `${config.name ?? "notebook"}/task`, prompt: config.prompt, parser: notebookParser });
  const resultsTurn = new Prompt({ path: `${config.name ?? "notebook"}/results`, prompt: "Cell outputs:\n\n{outputs}", parser: notebookParser });
  analyst.open("main", { promptArgs });
  analyst.receivePrompt(taskTurn, vars);
  const notebook: string[] = [];
  const steps = config.notebook?.max_steps ?? DEFAULT_NOTEBOOK_STEPS;
  for (let step = 0; step < steps; step += 1) {
    const parsed = (await analyst.respond({ ...(options.signal ? { signal: options.signal } : {}) })).parsed as NotebookReply;
    const outputs: string[] = [];
    for (const { kind, source } of parsed.cells) {
      notebook.push(`<${kind}>\n${source}\n</${kind}>`);
      if (kind !== "python_cell") {
        options.cells.push({ kind, source });
        continue;
      }
      // A failing cell returns its traceback as output, so the agent can rewrite it on the next turn.
      const result = await kernel.execute(source, { signal: options.signal });
      options.cells.push({ kind, source, output: result.output, ...(result.error ? { error: result.error } : {}) });
      outputs.push(result.output || "(no output)");
    }
    if (parsed.terminate) break;
    analyst.receivePrompt(resultsTurn, { outputs: outputs.join("\n---\n") || "(no code cells)" });
  }
  return { output: notebook.join("\n\n"), cells: options.cells };
}

/**
 * What fills `{api_directory}`: every endpoint of the agent's proxies, unless the system prompt holds them already.
 * The proxy block appends its instructions with the directory (Step 14) unless its `prompt_template` leaves it out;
 * a prompt that also places `{api_directory}` (Step 16) would otherwise list every endpoint twice.
 */
function apiDirectory(agent: Agent, manager: ProxyManager | undefined): string {
  if (!manager) return "";
  const directory = manager.retrieveApiDocs();
  const template = agent.systemPrompt.prompt;
  const literal = formatTemplate(template, Object.fromEntries(templatePlaceholders(template).map((name) => [name, ""])), { path: agent.systemPrompt.path });
  return literal.includes(directory) ? "" : directory;
}

/**
 * The agent with Step 16's instructions after its system prompt; its tools stay (query_api_doc, for one). A system
 * prompt that places `{api_directory}` itself is Step 16's NOTEBOOK_SYSTEM, written by the user: it already has
 * the instructions, so they are not added a second time.
 */
function notebookAgent(agent: Agent, hasApis: boolean): Agent {
  const text = agent.systemPrompt.prompt.trim();
  if (templatePlaceholders(text).includes(API_DIRECTORY)) return agent;
  const instructions = NOTEBOOK_INSTRUCTIONS + (hasApis ? CALL_API_LINE : "") + END_LINE;
  return agent.with({ systemPrompt: new Prompt({ path: agent.systemPrompt.path, prompt: text === "" ? instructions : `${text}\n\n${instructions}`, functionList: agent.systemPrompt.functionList }) });
}
