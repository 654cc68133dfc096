import { randomUUID } from "node:crypto";
import { Role, TaskState, type AgentCard, type AgentSkill, type Message, type Part, type StreamResponse, type Task } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client, type TransportFactory } from "@a2a-js/sdk/client";
import type { RemoteAgentConfig } from "../config/index.js";
import { ConfigError, ToolError } from "../errors.js";
import { FunctionTool } from "../tools/index.js";
import { fetchWithinOrigin } from "../util/fetchWithinOrigin.js";
import { redactSecrets, registerSecret } from "../util/redact.js";

/** How long one call may take by default, in seconds. */
const DEFAULT_TIMEOUT_SECONDS = 300;

/** How long a stopped call waits for the remote agent to take its `tasks/cancel`. */
const CANCEL_WAIT_MS = 2000;

/** What the tools report as the remote task goes (its status messages), for `--verbose`. */
export type RemoteProgress = (line: { agent: string; skill: string; text: string }) => void;

export interface RemoteAgentToolsOptions {
  /** The environment `token_env` is read from. */
  env: NodeJS.ProcessEnv;
  /** Told each status message of a remote task (the CLI prints them with --verbose). */
  onProgress?: RemoteProgress;
  /** Aborted when the run stops: the card is no longer waited for. */
  signal?: AbortSignal;
}

const TERMINAL_FAILURES = new Map<TaskState, string>([
  [TaskState.TASK_STATE_FAILED, "failed"],
  [TaskState.TASK_STATE_REJECTED, "rejected the task"],
  [TaskState.TASK_STATE_CANCELED, "canceled the task"],
]);

/**
 * The skills of a remote A2A agent as tools (one per skill, offered to the model as `{message, task_id?}`): each
 * call sends the message as a task of that skill (`metadata.skill`) with the official SDK's client, streaming when
 * the card says it can (its status messages told to `onProgress`), and returns the answer's artifacts as text. A task
 * that needs input returns the agent's question and the task id to answer on; one that fails is a tool error the
 * model reads. The card is read once, now: an agent that cannot be reached fails the run's start with a clear error.
 * The calls go to the configured URL's origin, or to one `endpoint_origins` names: a card whose endpoint is elsewhere
 * is refused when the run starts. The token (`token_env`) goes to those origins only, never through a redirect elsewhere.
 */
export async function remoteAgentTools(config: RemoteAgentConfig, options: RemoteAgentToolsOptions): Promise<FunctionTool[]> {
  const token = tokenOf(config, options.env);
  const origin = new URL(config.url).origin;
  // The card names the endpoint, and whoever serves the card may name any host: the tactic's messages (and its token)
  // go only where the tactic says, as a redirect is followed only within its origin.
  const allowed = new Set([origin, ...(config.endpoint_origins ?? []).map((entry) => new URL(entry).origin)]);
  const fetchImpl: typeof fetch = (input, init = {}) => {
    const url = input instanceof Request ? input.url : input;
    const headers = new Headers(init.headers);
    if (token !== undefined && allowed.has(new URL(url).origin)) headers.set("Authorization", `Bearer ${token}`);
    return fetchWithinOrigin(globalThis.fetch, url, { ...init, headers });
  };
  const { base, path } = cardLocation(config.url);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }), new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })].map((transport) => withinOrigins(transport, allowed, config)),
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
  });
  let client: Client;
  let card: AgentCard;
  try {
    client = await factory.createFromUrl(base, path);
    card = await client.getAgentCard();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError("a2a_unreachable", `cannot use the remote agent \`${config.name}\` at ${config.url}: ${redactSecrets((error as Error).message)}`, {
      hint: token === undefined ? "Check its URL (its card is read at /.well-known/agent-card.json); if it wants a token, give the variable holding it in remote_agents: [{name, url, token_env}]." : `Check its URL (its card is read at /.well-known/agent-card.json) and the token in $${config.token_env}.`,
    });
  }
  // A card read as JSON may leave out empty lists (the SDK parses only some shapes into its types).
  card = { ...card, skills: (card.skills ?? []).map((skill) => ({ ...skill, examples: skill.examples ?? [], tags: skill.tags ?? [] })) };
  const wanted = config.skills;
  const skills = card.skills.filter((skill) => wanted === undefined || wanted.includes(skill.id));
  const missing = (wanted ?? []).filter((id) => !card.skills.some((skill) => skill.id === id));
  if (missing.length > 0) throw new ConfigError("remote_agent_invalid", `the remote agent \`${config.name}\` has no skill ${missing.map((id) => `\`${id}\``).join(", ")}; its skills: ${card.skills.map((skill) => `\`${skill.id}\``).join(", ") || "none"}`, { hint: "Fix `skills:` of the remote agent (or leave it out to offer every skill)." });
  // A card without skills is still an agent: one tool named after it.
  const offered: AgentSkill[] = skills.length > 0 ? skills : [{ id: card.name, name: card.name, description: card.description, tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }];
  const streaming = card.capabilities?.streaming === true;
  const timeoutMs = (config.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  return offered.map((skill) => skillTool({ config, card, skill, client, streaming, timeoutMs, named: skills.length > 0, ...(options.onProgress ? { onProgress: options.onProgress } : {}) }));
}

/** A transport that is made only for an endpoint on one of the allowed origins (the SDK picks it from the card). */
function withinOrigins(transport: TransportFactory, allowed: ReadonlySet<string>, config: RemoteAgentConfig): TransportFactory {
  return {
    get protocolName() {
      return transport.protocolName;
    },
    create: (url, card) => {
      const endpoint = new URL(url).origin;
      if (!allowed.has(endpoint)) {
        const shown = config.name === new URL(config.url).host ? `tools: [a2a:${config.url}]` : `remote_agents: ${config.name}`;
        throw new ConfigError("remote_agent_invalid", `the card of the remote agent \`${config.name}\` (${config.url}) names its endpoint on another origin, ${endpoint}: lllm sends a tactic's messages and token only to the origin it names`, {
          hint: `If you trust ${endpoint} with this agent's calls${config.token_env !== undefined ? ` and its token ($${config.token_env})` : ""}, name it in remote_agents: [{name: ${config.name}, url: ${config.url}, endpoint_origins: [${endpoint}]}]${shown.startsWith("tools") ? ` instead of ${shown}` : ""}.`,
        });
      }
      return transport.create(url, card);
    },
  };
}

function tokenOf(config: RemoteAgentConfig, env: NodeJS.ProcessEnv): string | undefined {
  if (config.token_env === undefined) return undefined;
  const value = env[config.token_env];
  if (value === undefined || value.trim() === "") throw new ConfigError("remote_agent_token_missing", `the remote agent \`${config.name}\` wants the token in $${config.token_env}, which is not set (or empty)`, { hint: `Set it to the agent's bearer token: export ${config.token_env}=…` });
  registerSecret(value.trim());
  return value.trim();
}

/** The base URL and card path the SDK's resolver takes: a URL ending in `.json` is the card itself. */
function cardLocation(url: string): { base: string; path?: string } {
  const parsed = new URL(url);
  if (parsed.pathname.endsWith(".json")) return { base: url, path: "" };
  return { base: url.endsWith("/") ? url : `${url}/` };
}

interface SkillToolOptions {
  config: RemoteAgentConfig;
  card: AgentCard;
  skill: AgentSkill;
  client: Client;
  streaming: boolean;
  timeoutMs: number;
  /** The card lists skills (a message names the one it is for). */
  named: boolean;
  onProgress?: RemoteProgress;
}

function skillTool(options: SkillToolOptions): FunctionTool {
  const { config, card, skill } = options;
  const name = `${config.prefix ?? ""}${skill.id}`.replace(/[^a-zA-Z0-9_-]+/g, "_").slice(0, 64);
  const examples = skill.examples.length > 0 ? ` Examples: ${skill.examples.slice(0, 3).map((example) => JSON.stringify(example)).join("; ")}.` : "";
  return new FunctionTool({
    name,
    description: `${skill.description || skill.name} (the remote agent ${card.name}, over A2A).${examples}`,
    properties: {
      message: { type: "string", description: "What to ask the agent, in plain words." },
      task_id: { type: "string", description: "Only to answer an agent that asked for more input: the task id it gave." },
    },
    required: ["message"],
    strict: false,
    sideEffects: true,
    run: (args, context) => callSkill(options, name, String(args.message ?? ""), typeof args.task_id === "string" && args.task_id !== "" ? args.task_id : undefined, context.signal),
  });
}

/** Send one message (a new task of the skill, or the answer on a task waiting for input) and read the outcome. */
async function callSkill(options: SkillToolOptions, toolName: string, text: string, taskId: string | undefined, runSignal: AbortSignal | undefined): Promise<string> {
  const { skill, client } = options;
  // The agent's own name, once its card is read (an `a2a:URL` entry has no other).
  const who = options.card.name || options.config.name;
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMs), ...(runSignal ? [runSignal] : [])]);
  const message: Message = { messageId: randomUUID(), contextId: "", taskId: taskId ?? "", role: Role.ROLE_USER, parts: [textPart(text)], metadata: options.named ? { skill: skill.id } : {}, extensions: [], referenceTaskIds: [] };
  const request = { tenant: "", message, configuration: undefined, metadata: undefined };
  let task: Task | undefined;
  let answer: Message | undefined;
  try {
    if (options.streaming) {
      const artifacts = new Map<string, Part[]>();
      for await (const event of client.sendMessageStream(request, { signal })) {
        const outcome = apply(event, artifacts, (line) => options.onProgress?.({ agent: who, skill: skill.id, text: line }));
        if (outcome.task) task = outcome.task;
        if (outcome.message) answer = outcome.message;
      }
      if (task) task.artifacts = [...artifacts].map(([artifactId, parts]) => ({ artifactId, name: artifactId, description: "", parts, metadata: undefined, extensions: [] }));
    } else {
      const result = await client.sendMessage(request, { signal });
      if ("status" in result) task = result;
      else answer = result;
    }
  } catch (error) {
    // Stopped here (the run's limits, Ctrl-C, the call's timeout): the remote task is cancelled too, as far as the
    // agent lets (a short wait: stopping must not hang on it).
    if (signal.aborted && task) await client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_WAIT_MS) }).catch(() => undefined);
    if (runSignal?.aborted) throw runSignal.reason;
    const reason = signal.aborted ? `no answer within ${Math.round(options.timeoutMs / 1000)} s (remote_agents[].timeout)` : redactSecrets((error as Error).message);
    throw new ToolError("a2a_task_failed", `the remote agent \`${who}\` (${skill.id}) did not answer: ${reason}`);
  }
  if (answer) return partsText(answer.parts);
  if (!task) throw new ToolError("a2a_task_failed", `the remote agent \`${who}\` (${skill.id}) ended the stream without a task or an answer`);
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  const said = partsText(task.status?.message?.parts ?? []);
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    return `The agent needs more input: ${said || "(it asked without words)"}\nTo answer, call ${toolName} again with task_id "${task.id}" and your answer as the message.`;
  }
  const failure = TERMINAL_FAILURES.get(state);
  if (failure) throw new ToolError("a2a_task_failed", `the remote agent \`${who}\` (${skill.id}) ${failure}${said ? `: ${said}` : ""}`);
  return task.artifacts.map((artifact) => partsText(artifact.parts)).join("\n") || said;
}

/** Fold one streamed event into the task seen so far; status messages are told as progress. */
function apply(event: StreamResponse, artifacts: Map<string, Part[]>, progress: (line: string) => void): { task?: Task; message?: Message } {
  const payload = event.payload;
  if (payload?.$case === "task") {
    for (const artifact of payload.value.artifacts) artifacts.set(artifact.artifactId, [...artifact.parts]);
    return { task: payload.value };
  }
  if (payload?.$case === "message") return { message: payload.value };
  if (payload?.$case === "statusUpdate") {
    const status = payload.value.status;
    const text = partsText(status?.message?.parts ?? []);
    if (text !== "") progress(text);
    return { task: { id: payload.value.taskId, contextId: payload.value.contextId, status, artifacts: [], history: [], metadata: undefined } };
  }
  if (payload?.$case === "artifactUpdate" && payload.value.artifact) {
    const { artifact } = payload.value;
    const parts = payload.value.append ? [...(artifacts.get(artifact.artifactId) ?? []), ...artifact.parts] : [...artifact.parts];
    artifacts.set(artifact.artifactId, parts);
  }
  return {};
}

function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

/** Parts as the model reads them: texts joined, data as JSON, files by name or address. */
function partsText(parts: Part[]): string {
  return redactSecrets(
    parts
      .map((part) => {
        const content = part.content;
        if (content?.$case === "text") return content.value;
        if (content?.$case === "data") return JSON.stringify(content.value);
        if (content?.$case === "url") return `[file ${part.filename || content.value}: ${content.value}]`;
        if (content?.$case === "raw") return `[file ${part.filename || "(unnamed)"}, ${part.mediaType || "bytes"}, ${content.value.length} bytes]`;
        return "";
      })
      .join(""),
  );
}
