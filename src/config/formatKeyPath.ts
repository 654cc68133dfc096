import type { DataPath } from "./SourceDocument.js";

/**
 * A data path the way a user reads it in messages: `agent_configs[0].max_interrupt_steps`. Keys that are not plain
 * identifiers are quoted (`model_args["top-p"]`) so the path stays unambiguous.
 */
export function formatKeyPath(path: DataPath): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}
