// Code-action (seed 002) and the tool chain (seed 001): one Python program over the tools, in a sandbox.
export { runCodeAction, DEFAULT_CODE_ACTION, type RunCodeActionOptions, type CodeActionResult, type CodeActionSettings } from "./runCodeAction.js";
export { codeActionAgent } from "./codeActionAgent.js";
export { runProgram, type RunProgramOptions, type ProgramOutcome } from "./runProgram.js";
export { ProgramBridge, DEFAULT_REFERENCE_THRESHOLD, argumentsDigest, type ProgramBridgeOptions } from "./ProgramBridge.js";
export { toolChainTool, DEFAULT_TOOL_CHAIN, type ToolChainToolOptions, type ToolChainSettings } from "./toolChainTool.js";
export { ArtifactStore, type ArtifactRecord } from "./ArtifactStore.js";
export { approveAll, approveNone, askOnTerminal, noticeFirstRefusal, type ApprovalPolicy, type ApprovalRequest } from "../approval/index.js";
export { CodeActionBudgetError, CodeActionTimeoutError, CodeActionError } from "./CodeActionErrors.js";
export type { CodeActionReport, ProgramRecord, BridgedCallRecord, BridgedCallStatus, ProgramStatus } from "./CodeActionReport.js";
export { codeActionReportJson, programRecordJson } from "./CodeActionReport.js";
export { programPrompt, functionList, PROGRAM_RULES } from "./programPrompt.js";
export { pythonSignature, pythonType } from "./pythonSignature.js";
export { extractProgram } from "./extractProgram.js";
export { CANNOT_FINISH, BUDGET_REPAIR_PROMPT } from "./repairPrompts.js";
export { requireIsolation, DEFAULT_WORKSPACE_MB } from "./requireIsolation.js";
