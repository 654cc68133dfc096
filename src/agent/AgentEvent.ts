import type { ModelMessage, ProviderCarry, ToolCallRequest, Usage } from "../providers/Model.js";
import type { FunctionCall } from "../tools/index.js";

/**
 * What an agent reports while it responds, for progress lines, `--verbose` traces and JSON reports. Delivered
 * synchronously through the Agent's `onEvent`; discriminated by `type`.
 */
export type AgentEvent =
  /** The model is about to be called. `round` counts the tool-call rounds done so far in this respond(). */
  | {
      type: "model_call";
      agent: string;
      round: number;
      messages: number;
      tools: string[];
      /** The model's configured name. */
      model?: string;
      /** The messages sent (the loop's own array: listeners copy what they keep). */
      sent?: ModelMessage[];
    }
  /**
   * The model answered: text, tool calls, or both. `sent` is the `model_call`'s array it answers (the same object):
   * two copies of one agent may ask at once (an agent used as a tool, called twice in one answer), and the agent's
   * name alone does not say which call a reply belongs to. `carry`: the answer's own (`ModelResponse.carry`).
   */
  | { type: "model_reply"; agent: string; round: number; text: string; toolCalls: ToolCallRequest[]; usage: Usage; model?: string; latencyMs?: number; finishReason?: string; sent?: ModelMessage[]; carry?: ProviderCarry }
  /**
   * A tool call finished (its `resultStr` is set). `repeated`: not run again, the model was sent the earlier result.
   * `refused`: the tool needs approval, it was not given, and the call did not run (the model reads the refusal).
   */
  | { type: "tool_call"; agent: string; call: FunctionCall; durationMs: number; repeated: boolean; refused?: boolean }
  /** The reply did not parse; the model is asked again with `message` (`attempt` counts from 1). */
  | { type: "parse_retry"; agent: string; attempt: number; message: string }
  /**
   * A code-action program failed (it crashed, timed out, gave no answer or reached max_tool_calls; or the reply held
   * no program) and the model is asked for a repaired one. `attempt`: the failed program's number, from 1; `repair`:
   * the repair now asked for, of `maxRepairs`; `reason`: what went wrong, one line.
   */
  | { type: "program_repair"; agent: string; attempt: number; repair: number; maxRepairs: number; reason: string }
  /** Something the user should know but that does not stop the run. */
  | { type: "warning"; agent: string; message: string };
