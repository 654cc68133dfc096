/**
 * The public library API of lllm: an explicit list. Anything not exported here is internal and may change.
 * Test helpers (the scripted model, the mock OpenAI server) live at the `lllm/testing` subpath.
 */

// Errors, by who must act.
export {
  LllmError,
  ConfigError,
  ModelBehaviorError,
  ToolError,
  SandboxError,
  ProviderError,
  BudgetError,
  RunLimitError,
  InterruptedError,
  formatLocation,
  type RunLimitName,
  type ErrorCode,
  type ConfigProblem,
  type SourceLocation,
} from "./errors.js";

// Tools: schema + implementation, declarations, calls.
export {
  FunctionTool,
  FunctionTool as Function,
  FunctionCall,
  tool,
  declaration,
  toFunctionTool,
  functionFromDeclaration,
  normalizeParameters,
  type ToolSpec,
  type DeclarationSpec,
  toolResult,
  type ToolContext,
  type ToolRunContext,
  type ToolAnnotations,
  type ToolResult,
  type ToolResultSpec,
  type ContentBlock,
  type LogLevel,
  type SampleRequest,
  type SampleResult,
  type ElicitRequest,
  type ElicitResult,
  type ToolRun,
  type ResultProcessor,
  type JsonSchema,
} from "./tools/index.js";

// zod, so that package files can `import { z } from "lllm"` with nothing installed (loaded on first use).
export { z } from "./util/lazyZod.js";

// Configuration: tactic files, project settings, schemas.
export {
  loadTacticFile,
  loadProjectSettings,
  tacticSchema,
  packageSchema,
  type LoadedTactic,
  type LoadTacticOptions,
  type TacticConfig,
  type AgentConfig,
  type ProxyConfig,
  type ProjectSettings,
} from "./config/index.js";

// Packages and refs.
export { Registry, Package, readManifest, parseRef, lllmHome, type RegistryOptions, type ToolEntry, type ResolvedTool, type PackageManifest, type Ref } from "./registry/index.js";

// Prompts, agents and the tool-call loop.
export { Prompt, ParseError, type PromptOptions, type PromptParser } from "./prompts/index.js";
export { Agent, Dialog, UnknownToolError, ROUND_LIMIT_TEXT, REPEATED_CALL_TEXT, type AgentOptions, type RespondOptions, type Message, type AgentEvent, type Session } from "./agent/index.js";

// Models, and fallback chains (a chain is itself a Model that says which of its models answered).
export { createModel, OpenAIChatModel, OpenAIResponsesModel, FallbackModel, type CreateModelOptions, type FallbackNotice, type Model, type ModelMessage, type ModelRequest, type ModelResponse, type ResponseFormat, type ToolCallRequest, type ToolSchema, type Usage } from "./providers/index.js";

// Limits of a whole run: one budget per run tree, asked before each model request and tool call.
export { RunBudget, type RunLimits, type SpendReport, type AgentSpend, type ToolSpend, type ToolBudget } from "./limits/index.js";

// Proxies: whole data APIs behind CALL_API.
export { proxy, ProxyManager, ProxyCallError, type ProxySpec, type ProxyDefinition, type ProxyManagerOptions } from "./proxies/index.js";
// Loading them is the registry's work (the packages' proxies/ files), beside tools and tactics.
export { loadProxies } from "./registry/loadProxies.js";

// Sandboxes: the persistent Python kernel (isolated with bubblewrap) and the Step 17 interface.
export { PythonKernel, SubprocessSandbox, BridgeError, closeAllKernels, detectIsolation, detectGvisor, type Sandbox, type PythonKernelOptions, type IsolationOptions } from "./sandbox/index.js";

// Code-action and the tool chain: one Python program over the tools, a hidden call budget, bounded repair.
export {
  runCodeAction,
  codeActionAgent,
  toolChainTool,
  ArtifactStore,
  approveAll,
  approveNone,
  askOnTerminal,
  noticeFirstRefusal,
  CodeActionBudgetError,
  CodeActionTimeoutError,
  CodeActionError,
  type RunCodeActionOptions,
  type CodeActionResult,
  type CodeActionSettings,
  type CodeActionReport,
  type ProgramRecord,
  type BridgedCallRecord,
  type ArtifactRecord,
  type ApprovalPolicy,
  type ApprovalRequest,
  type ToolChainToolOptions,
} from "./codeaction/index.js";

// MCP: servers as tool sources, provider-side declarations, packages served over MCP.
// Each from its own module: the MCP SDK loads only when a server is started or served.
export { McpConnections, type McpConnectionsOptions } from "./mcp/McpConnections.js";
export type { McpClientHooks, ElicitationRequest } from "./mcp/McpClientHooks.js";
export type { McpServerConfig, McpOAuthConfig } from "./config/TacticConfig.js";
export { McpToolError } from "./mcp/McpToolError.js";
export { MCP } from "./mcp/MCP.js";
export { assertProviderMcpSupported } from "./providers/assertProviderMcpSupported.js";
export { createPackageServer } from "./mcp/serve/createPackageServer.js";

// Tactics.
export { prepareTactic, type PreparedTactic, type PrepareOptions, type BoundAgent, type BoundTool } from "./tactics/prepareTactic.js";
export { runTactic } from "./tactics/runTactic.js";
export { tacticAsFunction } from "./tactics/tacticAsFunction.js";
export { tactic, type TacticSpec, type TacticContext, type TacticDefinition, type TacticToolSpec } from "./packageApi/tactic.js";
export { resource, resourceTemplate, type ResourceSpec, type ResourceTemplateSpec, type ResourceDefinition, type ResourceReadResult } from "./packageApi/resource.js";
export type { RunOptions, TacticResult, ToolCallRecord, RunUsage } from "./tactics/TacticRun.js";
// One recorded run, as `lllm run` and each item of `lllm batch` make it: checks, the run store's record, usage and cost.
export { runRecorded, type RecordedRunOptions, type RecordedRun, type RecordedRunSuccess, type RecordedRunFailure, type RecordedUsage } from "./run/runRecorded.js";

// Serving tactics over HTTP as OpenAI-compatible models (`lllm serve`): a node:http handler, or a server of its own.
export { serve, type ServeOptions, type LllmServer } from "./serve/serve.js";

// `lllm test` from code: test files, cassettes, assertions, reporters (vitest helpers are in `lllm/testing`).
export { runTests, textReporter, jsonReporter, junitReporter, testRunJson, junitXml, type RunTestsOptions, type TestRun, type Reporter, type TestRunStart, type TestRunSummary, type CaseResult, type CaseMode, type CaseProblem, type AssertionOutcome, type TextReporterOptions } from "./evals/index.js";
