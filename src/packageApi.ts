/**
 * What package files (tools/, tactics/, proxies/) use from `import … from "lllm"`: the light part of the public API.
 * The loader serves these at once and loads the rest of the library only if a file asks for another name, which
 * keeps `lllm validate` and `lllm run` from loading MCP, code-action and providers just to read a tool file.
 */
export { tool, declaration, FunctionCall, FunctionTool, FunctionTool as Function, toFunctionTool } from "./tools/index.js";
export { tactic } from "./tactics/tactic.js";
export { proxy } from "./proxies/proxy.js";
export { ParseError } from "./prompts/ParseError.js";
export { LllmError, ConfigError, ModelBehaviorError, ToolError, SandboxError, ProviderError, BudgetError, InterruptedError } from "./errors.js";
export { z } from "./util/lazyZod.js";
