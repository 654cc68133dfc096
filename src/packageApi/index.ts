/**
 * What package files (tools/, tactics/, proxies/) use from `import … from "lllm"`: the light part of the public API.
 * The loader serves these at once and loads the rest of the library only if a file asks for another name, which
 * keeps `lllm validate` and `lllm run` from loading MCP, code-action and providers just to read a tool file.
 *
 * It sits below the registry, which serves it to the files it loads: nothing here may import the registry, or
 * anything above it (tactics/, a proxy's loader), or the registry would import itself back.
 */
export { tool, declaration, toolResult, FunctionCall, FunctionTool, FunctionTool as Function, toFunctionTool } from "../tools/index.js";
export { resource, resourceTemplate } from "./resource.js";
export { tactic } from "./tactic.js";
export { proxy } from "../proxies/proxy.js";
export { ParseError } from "../prompts/ParseError.js";
export { LllmError, ConfigError, ModelBehaviorError, ToolError, SandboxError, ProviderError, BudgetError, InterruptedError } from "../errors.js";
export { z } from "../util/lazyZod.js";
