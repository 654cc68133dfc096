export { SourceDocument } from "./SourceDocument.js";
export type { DataPath, SourceLocator } from "./SourceDocument.js";
export { validateAgainstSchema } from "./validateAgainstSchema.js";
export type { DescribeOptions } from "./describeSchemaError.js";
export { validateTactic } from "./validateTactic.js";
export { sortProblems } from "./sortProblems.js";
export { formatKeyPath } from "./formatKeyPath.js";
export { displayPath } from "./displayPath.js";
export { fileLocator } from "./fileLocator.js";
export { deepMerge } from "./deepMerge.js";
export { isPackageRef } from "./isPackageRef.js";
export { readSourceDocument } from "./readSourceDocument.js";
export type { ReadSourceOptions } from "./readSourceDocument.js";
export { loadTacticFile } from "./loadTacticFile.js";
export type { LoadTacticOptions } from "./loadTacticFile.js";
export type { LoadedTactic } from "./LoadedTactic.js";
export { mergeAgents } from "./mergeAgents.js";
export type { MergeAgentsOptions } from "./mergeAgents.js";
export { loadProjectSettings } from "./loadProjectSettings.js";
export type { LoadedProjectSettings, ProjectSettings } from "./loadProjectSettings.js";
export { replySizeBytes } from "./replySizeBytes.js";
export { tacticSchema } from "./tacticSchema.js";
export { packageSchema } from "./packageSchema.js";
export { BUILT_IN_TACTIC_TYPES, chainMember, modelChain, type BuiltInTacticType, type LimitsConfig } from "./TacticConfig.js";
export type {
  AgentConfig,
  AgentSettings,
  CodeActionConfig,
  InvokerConfig,
  McpServerConfig,
  RemoteAgentConfig,
  NotebookConfig,
  PipelineStep,
  ProxyConfig,
  SandboxConfig,
  TacticConfig,
  ToolChainConfig,
} from "./TacticConfig.js";
