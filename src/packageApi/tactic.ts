import type { Agent } from "../agent/index.js";
import type { AgentSettings } from "../config/index.js";
import { ConfigError } from "../errors.js";
import type { ParametersInput, ToolContext } from "../tools/index.js";

/** What a tactic's code gets for one call: fresh agents (seed Step 15), the run's vars, and the run's controls. */
export interface TacticContext {
  /** The agents of the tactic's `agentGroup` (or of its config), built fresh for this call. */
  agents: Record<string, Agent>;
  /** Template arguments: the tactic's `vars`, `--var` values and `input`. */
  vars: Record<string, unknown>;
  signal?: AbortSignal;
  /** Streams the final answer's text, when the caller wants it. */
  onText?: (delta: string) => void;
}

/** A method of a tactic offered as a tool, picked with `pkg.tactics:name#tool` (LLLM's `@tactictool`). */
export interface TacticToolSpec {
  description: string;
  parameters?: ParametersInput;
  run: (args: Record<string, unknown>, context: TacticContext & { tool: ToolContext }) => unknown;
}

/** A tactic written in code: a package's `tactics/*.ts` file exports one (`export default tactic({...})`). */
export interface TacticSpec {
  /** The tactic's name (the tool name when it is used as a tool). */
  name: string;
  /** What it does: the tool description when it is used as a tool. */
  description: string;
  /** The agents `call` uses; each must be configured (in `config`, or in the YAML tactic that runs this one). */
  agentGroup?: string[];
  /** JSON Schema (or a zod schema) of the input. Absent: text. */
  input?: unknown;
  /** JSON Schema (or a zod schema) of the output, for documentation and tools. */
  output?: unknown;
  /** As a tool: one `task` parameter (default), or with `kwargs` the input object's fields. */
  parameterMode?: "task" | "kwargs";
  /** Default agent configuration, in the tactic file format (`global`, `agent_configs`, `vars`…). */
  config?: { global?: AgentSettings; agent_configs?: Array<AgentSettings & { name: string }>; [key: string]: unknown };
  /** Run the tactic on one input and return its output. */
  call: (input: unknown, context: TacticContext) => unknown;
  /** Methods offered as tools (`pkg.tactics:name#tool`). */
  tools?: Record<string, TacticToolSpec>;
}

/** A tactic definition, branded so that one loaded through another copy of lllm is still recognised. */
export type TacticDefinition = TacticSpec & { readonly [TACTIC_BRAND]: true };

export const TACTIC_BRAND: unique symbol = Symbol.for("lllm.tactic") as never;

/** Define a tactic in code (the TypeScript form of LLLM's `Tactic` subclass). */
export function tactic(spec: TacticSpec): TacticDefinition {
  const problems: string[] = [];
  if (typeof spec?.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(spec.name)) problems.push("`name` must be letters, digits, `_` or `-`");
  if (typeof spec?.description !== "string") problems.push("`description` must be a string");
  if (typeof spec?.call !== "function") problems.push("`call(input, context)` must be a function");
  for (const [name, member] of Object.entries(spec?.tools ?? {})) {
    if (typeof member?.run !== "function") problems.push(`tool \`${name}\` needs a run(args, context) function`);
  }
  if (problems.length > 0) throw new ConfigError("tactic_invalid", `tactic(${JSON.stringify(spec?.name ?? "?")}): ${problems.join("; ")}`);
  return Object.freeze({ ...spec, [TACTIC_BRAND]: true as const });
}

/** A tactic definition from a module export, also one made by another copy of lllm (checked by brand, not class). */
export function toTacticDefinition(value: unknown): TacticDefinition | undefined {
  if (typeof value !== "object" || value === null || !(TACTIC_BRAND in value)) return undefined;
  return value as TacticDefinition;
}
