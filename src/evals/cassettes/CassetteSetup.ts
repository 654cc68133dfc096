import type { ToolSchema } from "../../providers/Model.js";
import { PROVIDER_ROUTES } from "../../providers/providerRoutes.js";
import { canonicalJson } from "../../util/canonicalJson.js";
import { isPlainObject } from "../../util/isPlainObject.js";

/** A model as a cassette names it: the provider it is served by and its name there. */
export interface ModelIdentity {
  provider: string;
  name: string;
}

/** A tool as the model read it: what it is sent (the `to_tool()` JSON). */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/**
 * What one agent's model calls were made with, across the recorded run: every model that answered (more than one
 * when a fallback chain moved on) and every tool offered (a name twice when its definition changed during the run).
 */
export interface AgentSetup {
  models: ModelIdentity[];
  tools: ToolDefinition[];
}

/** By agent, as the cassette's turns are (`(judge)` for judges). */
export type CassetteSetup = Record<string, AgentSetup>;

/**
 * The provider and name of a model as an agent names it (`gpt-4o-mini`, `anthropic/claude-…`, `scripted:file`):
 * a known route prefix is the provider; a name without one goes to OpenAI or the OpenAI-compatible server the
 * agent names.
 */
export function modelIdentity(model: string): ModelIdentity {
  if (model.startsWith("scripted:")) return { provider: "scripted", name: model.slice("scripted:".length) };
  const slash = model.indexOf("/");
  const prefix = slash < 0 ? undefined : model.slice(0, slash);
  if (prefix !== undefined && PROVIDER_ROUTES.some((route) => route.prefix === prefix)) return { provider: prefix, name: model.slice(slash + 1) };
  return { provider: "openai", name: model };
}

/** `openai/gpt-4o-mini`, as messages show a model. */
export function formatModel(model: ModelIdentity): string {
  return `${model.provider}/${model.name}`;
}

export function toolDefinition(tool: ToolSchema): ToolDefinition {
  const { name, description, parameters, strict } = tool.function;
  return { name, description, parameters, ...(strict !== undefined ? { strict } : {}) };
}

/** Equal as the model would read them (keys in any order). */
export function sameDefinition(a: ToolDefinition, b: ToolDefinition): boolean {
  return a.name === b.name && a.description === b.description && (a.strict ?? false) === (b.strict ?? false) && schemaText(a.parameters) === schemaText(b.parameters);
}

/** Parameter schemas as canonical JSON, each computed once: a replay compares the same schema objects call after call. */
const schemaTexts = new WeakMap<object, string>();

function schemaText(schema: Record<string, unknown>): string {
  let text = schemaTexts.get(schema);
  if (text === undefined) schemaTexts.set(schema, (text = canonicalJson(schema)));
  return text;
}

/** Builds a cassette's setup from the model calls of a recorded run. */
export class SetupRecorder {
  readonly #setup: CassetteSetup = {};

  /** A model call: `model` answered for `agent`, offered `tools`. */
  note(agent: string, model: string, tools: readonly ToolSchema[]): void {
    const setup = (this.#setup[agent] ??= { models: [], tools: [] });
    const identity = modelIdentity(model);
    if (!setup.models.some((known) => known.provider === identity.provider && known.name === identity.name)) setup.models.push(identity);
    for (const tool of tools) {
      const definition = toolDefinition(tool);
      if (!setup.tools.some((known) => sameDefinition(known, definition))) setup.tools.push(definition);
    }
  }

  get setup(): CassetteSetup {
    return this.#setup;
  }
}

/**
 * A cassette's `setup`, checked: problems say where (`setup.bot.tools[0].name`). `undefined` value: the cassette
 * was recorded before lllm kept it.
 */
export function readSetup(value: unknown): { setup?: CassetteSetup; problems: string[] } {
  if (value === undefined) return { problems: [] };
  if (!isPlainObject(value)) return { problems: ["setup: expected a mapping of agent names to {models, tools}"] };
  const problems: string[] = [];
  for (const [agent, entry] of Object.entries(value)) {
    const at = `setup.${agent}`;
    if (!isPlainObject(entry) || !Array.isArray(entry["models"]) || !Array.isArray(entry["tools"])) {
      problems.push(`${at}: expected {models: [...], tools: [...]}`);
      continue;
    }
    (entry["models"] as unknown[]).forEach((model, index) => {
      if (!isPlainObject(model) || typeof model["provider"] !== "string" || typeof model["name"] !== "string") problems.push(`${at}.models[${index}]: expected {provider, name}`);
    });
    (entry["tools"] as unknown[]).forEach((tool, index) => {
      if (!isPlainObject(tool) || typeof tool["name"] !== "string" || typeof tool["description"] !== "string" || !isPlainObject(tool["parameters"]) || (tool["strict"] !== undefined && typeof tool["strict"] !== "boolean")) {
        problems.push(`${at}.tools[${index}]: expected {name, description, parameters} (and maybe strict)`);
      }
    });
  }
  return problems.length > 0 ? { problems } : { setup: value as CassetteSetup, problems };
}
