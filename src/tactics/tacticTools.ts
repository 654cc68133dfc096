import { checkParameterSchemas } from "../tools/checkParameterSchemas.js";
import type { AgentEvent } from "../agent/index.js";
import { FunctionTool, normalizeParameters, type ToolContext } from "../tools/index.js";
import { tacticMember } from "./tacticMember.js";
import type { BoundCapability, PreparedTactic } from "./prepareTactic.js";
import { tacticAsFunction } from "./tacticAsFunction.js";
import { nestedRunBudget } from "./tacticBudget.js";
import type { RunOptions, TacticRunner } from "./TacticRun.js";

/** A tactic used as a tool: the tactic (prepared with its parent), the `tools:` entry that names it, and how to run it. */
export interface TacticToolOptions {
  nested: PreparedTactic;
  capability: BoundCapability;
  options: RunOptions;
  onEvent: (event: AgentEvent) => void;
  /** Runs the tactic (given by the run, so that this module does not import the run: no import cycle). */
  runner: TacticRunner;
}

/**
 * A `pkg.tactics:name` entry of `tools:` as a tool (seed Step 8): calling it runs that tactic with fresh agents on
 * the validated input. `pkg.tactics:name#tool` picks one of a code tactic's tools instead. The nested tactic was
 * prepared with its parent, so a broken one fails before the run starts; its model calls count in the run's usage.
 */
export async function tacticTool({ nested, capability, options: parentOptions, onEvent, runner }: TacticToolOptions): Promise<FunctionTool> {
  // The run's start hook, its limits, its turn's additions and its streamed answer are the parent's alone (a nested
  // answer is a tool result, not text for the user): the run's budget (passed on) holds for the nested run.
  const { onStart: _parentStart, limits: _parentLimits, turn: _parentTurn, onText: _parentText, ...options } = parentOptions;
  const { config } = nested.tactic;
  const name = config.name ?? capability.entry.key;
  const run = async (input: unknown, signal: AbortSignal | undefined, context?: ToolContext): Promise<unknown> => {
    // Each call counts in the run's budget under this tool, with the nested tactic's own limits; its agents are named
    // `<tool>/<agent>` in everything the run reports (the prefix nests).
    const budget = options.budget ? nestedRunBudget(options.budget, nested, name) : undefined;
    try {
      return (await runner.run(nested, { ...options, input, ...(signal ? { signal } : {}), ...(budget ? { budget } : {}), agentPrefix: `${options.agentPrefix ?? ""}${name}/`, onEvent }, context)).output;
    } finally {
      budget?.close();
    }
  };

  if (capability.member === undefined) {
    const whole = tacticAsFunction({
      name,
      description: config.description ?? `Run the ${name} tactic on a task.`,
      inputSchema: config.input,
      ...(config.parameter_mode ? { parameterMode: config.parameter_mode } : {}),
      call: (input, context) => run(input, context.signal, context),
    });
    // A resumed run calls it again: the nested run's model and tool calls are answered from the run's journal.
    whole.replaysInside = true;
    return whole;
  }
  const member = await tacticMember({ ...capability, member: capability.member });
  const where = `${capability.ref}#${capability.member}`;
  const parameters = normalizeParameters(member.parameters ?? {}, { where });
  checkParameterSchemas(parameters.properties, { where, file: capability.entry.file });
  return new FunctionTool({
    name: capability.member,
    description: member.description,
    ...parameters,
    replaysInside: true,
    run: async (args, context) => {
      // A tool method gets fresh agents like a whole call: run the tactic with a call that invokes the method.
      const budget = options.budget ? nestedRunBudget(options.budget, nested, capability.member!) : undefined;
      try {
        return await runner.withAgents({ prepared: nested, options: { ...options, ...(budget ? { budget } : {}), agentPrefix: `${options.agentPrefix ?? ""}${capability.member}/` }, onEvent }, async (agents) =>
          await member.run(args, { agents: Object.fromEntries(agents), vars: { ...(nested.tactic.config.vars ?? {}) }, ...(context.signal ? { signal: context.signal } : {}), tool: context }),
        );
      } finally {
        budget?.close();
      }
    },
  });
}
