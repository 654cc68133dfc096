import { readFileSync } from "node:fs";
import type { FunctionTool } from "../tools/index.js";
import { pythonRepr } from "../util/pythonRepr.js";
import { pythonName } from "./pythonNames.js";
import { parameterOrder } from "./pythonSignature.js";

let preludeSource: string | undefined;

/**
 * The Python a program's kernel runs first: the table of tools (Python name, tool name, positional parameter
 * order, bare or only under `tools.`), then prelude.py, which turns it into functions that call the host.
 */
export function toolPrelude(tools: readonly FunctionTool[]): string {
  // The path goes through the folder's name: it holds from dist/<folder>/ and from the bundle in dist/bundle/ alike.
  preludeSource ??= readFileSync(new URL("../codeaction/prelude.py", import.meta.url), "utf8");
  const seen = new Set<string>();
  const specs = tools.flatMap((tool) => {
    const { python, bare } = pythonName(tool.name);
    if (seen.has(python)) return []; // `a-b` and `a_b`: the second is still reachable as tools.__getattr__
    seen.add(python);
    return [[python, tool.name, parameterOrder(tool), bare]];
  });
  return `_LLLM_TOOLS = ${pythonRepr(specs)}\n${preludeSource}`;
}
