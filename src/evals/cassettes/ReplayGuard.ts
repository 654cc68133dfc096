import { ProviderError } from "../../errors.js";
import type { Model, ModelRequest, ModelResponse } from "../../providers/Model.js";
import type { ScriptedModel } from "../../providers/ScriptedModel.js";
import type { Script } from "../../providers/ScriptedTurn.js";
import { textDiff } from "../../util/textDiff.js";
import { formatModel, modelIdentity, sameDefinition, toolDefinition, type CassetteSetup, type ToolDefinition } from "./CassetteSetup.js";

export interface ReplayGuardOptions {
  /** The cassette's turns, as one model for the whole case. */
  scripted: ScriptedModel;
  script: Script;
  /** The cassette's setup; `undefined` for a cassette recorded before lllm kept it (then only the turns are checked). */
  setup: CassetteSetup | undefined;
  /** The cassette's redaction, applied to what is offered now before it is compared with what was recorded. */
  redactValue: <T>(value: T) => T;
  /** How to record the case again. */
  rerecordHint: string;
}

/** Codes of a replay that left its cassette: the first such error is the cause every later call reports. */
const REPLAY_ERRORS = new Set(["provider_replay_diverged", "provider_script_exhausted", "provider_script_no_agent"]);

/**
 * A case's replay beyond what its turns say: each model call is checked against the cassette's setup before the
 * scripted model answers it. Another model than the one that answered when the case was recorded, or a tool now
 * described or shaped otherwise (a tactic used as a tool included: its description is what the parent reads), is
 * a divergence with the change shown, as a changed message is: the recorded answers were given to something else.
 * After the run, `unusedTurns` says when the recording holds turns the run no longer asked for.
 */
export class ReplayGuard {
  readonly #options: ReplayGuardOptions;
  /** Calls per agent, to say which diverged. */
  readonly #calls = new Map<string, number>();
  #failure: unknown;

  constructor(options: ReplayGuardOptions) {
    this.#options = options;
  }

  /** The model an agent configured with `name` replays through: named so, so the recorded usage is priced as it was live. */
  model(name: string): Model {
    return { name, generate: (request) => this.#generate(name, request) };
  }

  async #generate(name: string, request: ModelRequest): Promise<ModelResponse> {
    // Once off the recording, every later call fails with the first cause (a nested tactic's caller would otherwise
    // report its own request, which differs only because the nested call failed).
    if (this.#failure) throw this.#failure;
    const agent = request.agent ?? "(model)";
    const call = (this.#calls.get(agent) ?? 0) + 1;
    this.#calls.set(agent, call);
    const change = this.#change(agent, name, request);
    if (change) {
      this.#failure = new ProviderError("provider_replay_diverged", `the replay diverged at agent \`${agent}\`'s model call ${call}: ${change.map((line, index) => (index === 0 ? line : `    ${line}`)).join("\n")}`, { hint: this.#options.rerecordHint });
      throw this.#failure;
    }
    try {
      return await this.#options.scripted.generate(request);
    } catch (error) {
      if (error instanceof ProviderError && REPLAY_ERRORS.has(error.code)) this.#failure ??= error;
      throw error;
    }
  }

  /** What differs between the recorded setup of the agent and this call, as lines (the first one a sentence), or nothing. */
  #change(agent: string, name: string, request: ModelRequest): string[] | undefined {
    const recorded = this.#options.setup?.[agent];
    // An agent the setup does not name has no turns either: the scripted model says so.
    if (!recorded) return undefined;
    const now = modelIdentity(name);
    if (!recorded.models.some((model) => model.provider === now.provider && model.name === now.name)) {
      return [`the agent now calls ${formatModel(now)}, but the recording was answered by ${recorded.models.map(formatModel).join(" and ")} (its answers, token counts and price are that model's)`];
    }
    for (const tool of request.tools ?? []) {
      const plain = toolDefinition(tool);
      const same = recorded.tools.filter((known) => known.name === plain.name);
      // Redacted only when it differs as it is: a definition that holds no secret is compared once.
      if (same.some((known) => sameDefinition(known, plain))) continue;
      const definition = this.#options.redactValue(plain);
      if (same.some((known) => sameDefinition(known, definition))) continue;
      if (same.length === 0) return [`the model would now be offered tool \`${definition.name}\`, which the recording never offered it:`, `+ ${quote(definition.description)}`];
      return [`the model would now read tool \`${definition.name}\` otherwise than the recording did:`, ...definitionDiff(same[0]!, definition)];
    }
    return undefined;
  }

  /**
   * After the run: when turns of the cassette were never asked for, the run now makes fewer model calls than the
   * recorded one did (the code stops earlier), which the answers it did get cannot show.
   */
  unusedTurns(): string | undefined {
    const { scripted, script } = this.#options;
    const left = scripted.remaining;
    if (left === 0) return undefined;
    const agents = Array.isArray(script) ? [] : Object.entries((script as { agents: Record<string, readonly unknown[]> }).agents);
    const asked = (agent: string): number => scripted.requests.filter((request) => request.agent === agent).length;
    const by = agents
      .map(([agent, turns]) => ({ agent, recorded: turns.length, asked: asked(agent) }))
      .filter((entry) => entry.recorded > entry.asked)
      .map((entry) => `agent \`${entry.agent}\`: ${entry.recorded} recorded, ${entry.asked} asked`);
    return `the recording has ${left} more turn${left === 1 ? "" : "s"} than the run used${by.length > 0 ? ` (${by.join("; ")})` : ""}: the run now calls the model less often than when it was recorded`;
  }
}

/** What differs between two definitions of a tool: its description, its parameters, its strictness. */
function definitionDiff(recorded: ToolDefinition, now: ToolDefinition): string[] {
  const lines: string[] = [];
  if (recorded.description !== now.description) lines.push("its description differs:", ...textDiff(recorded.description, now.description, { labels: ["recorded", "now"] }));
  const before = JSON.stringify(sorted(recorded.parameters), null, 2);
  const after = JSON.stringify(sorted(now.parameters), null, 2);
  if (before !== after) lines.push("its parameters differ:", ...textDiff(before, after, { labels: ["recorded", "now"] }));
  if ((recorded.strict ?? false) !== (now.strict ?? false)) lines.push(`its strict mode differs: recorded ${recorded.strict ?? false}, now ${now.strict ?? false}`);
  return lines;
}

/** A value with its object keys sorted, so that a diff shows changes, not orderings. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 199)}…` : text);
}
