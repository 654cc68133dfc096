import { yaml } from "../util/lazyYaml.js";
import type { RunRecord } from "./RunRecord.js";

/**
 * A `scripted:` model file of a run's model turns, in call order. Each tool call carries the id and the result
 * the recorded run got (`result`), so that the scripted model can tell, when it is replayed with the tools
 * running for real, the first turn whose tools now answer differently.
 */
export function toReplayScript(run: RunRecord): string {
  const results = new Map(run.tool_calls.map((call) => [call.call_id, call.result]));
  const turns = run.model_calls.map((call) => {
    const turn: Record<string, unknown> = {};
    if (call.reply) turn.text = call.reply;
    if (call.tool_calls.length > 0) {
      turn.tool_calls = call.tool_calls.map((request) => {
        const entry: Record<string, unknown> = { id: request.id, name: request.name, arguments: parseArguments(request.arguments) };
        const result = results.get(request.id);
        if (typeof result === "string") entry.result = result;
        return entry;
      });
    }
    if (turn.text === undefined && turn.tool_calls === undefined) turn.text = "";
    turn.usage = { prompt_tokens: call.prompt_tokens, completion_tokens: call.completion_tokens };
    return turn;
  });
  const header = [
    `# The model's turns of run ${run.id} (${run.tactic_name ?? "?"}), written by \`lllm logs replay\`.`,
    `# Replay offline, the tools running for real:`,
    `#   lllm run ${run.tactic_path ?? "TACTIC"} --model scripted:THIS_FILE --input ...`,
    `# A tool whose result differs from the recorded \`result\` stops the replay, naming the turn.`,
  ].join("\n");
  return `${header}\n${yaml.stringify({ run: run.id, input: run.input, turns }, { lineWidth: 0 })}`;
}

/** Arguments as an object when they are JSON (readable), else the raw text the model sent. */
function parseArguments(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}
