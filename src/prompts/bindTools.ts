import { ConfigError } from "../errors.js";
import type { FunctionTool } from "../tools/index.js";

/**
 * Finds the implementation of a tool named in a prompt (a registry lookup, usually). Return `undefined` when
 * nothing has that name; throw for anything else (an ambiguous ref).
 */
export type ToolResolver = (name: string) => FunctionTool | undefined;

/**
 * The runnable tools of a prompt's `functionList` (seed 000, Step 7): a live tool as it is, a declaration (a tool
 * without `run`) bound to the implementation of the same exact name, a string replaced by what it names. Anything
 * that cannot be bound is a `tool_not_found` ConfigError naming the tool and the prompt, raised before any model
 * call so a run never starts with a tool it cannot honour.
 */
export function bindTools(list: ReadonlyArray<FunctionTool | string>, options: { path: string; resolveTool?: ToolResolver | undefined }): FunctionTool[] {
  return list.map((entry) => {
    if (typeof entry !== "string" && !entry.isDeclaration) return entry;
    const name = typeof entry === "string" ? entry : entry.name;
    const implementation = options.resolveTool?.(name);
    if (!implementation) throw toolNotFound(name, options.path, options.resolveTool !== undefined);
    return typeof entry === "string" ? implementation : entry.bind(implementation);
  });
}

function toolNotFound(name: string, path: string, hasResolver: boolean): ConfigError {
  const why = hasResolver ? "no tool with that exact name is registered" : "the agent has no tool resolver to bind it";
  return new ConfigError("tool_not_found", `prompt \`${path}\` lists the tool \`${name}\`, but ${why}`, {
    hint: hasResolver
      ? `Register an implementation named exactly \`${name}\` (a package's tools/ folder, or the runtime), or remove it from the prompt.`
      : `Pass resolveTool to the Agent, or put the tool itself (a FunctionTool with run) in functionList.`,
  });
}
