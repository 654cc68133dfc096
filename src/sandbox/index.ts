export type { Sandbox } from "./Sandbox.js";
export { PythonKernel, type PythonKernelOptions, type CellResult } from "./PythonKernel.js";
export { SubprocessSandbox, type SubprocessSandboxOptions } from "./SubprocessSandbox.js";
export { BridgeError } from "./BridgeError.js";
export type { HostFunction } from "./answerCall.js";
export { detectIsolation, type IsolationSupport } from "./detectIsolation.js";
export { closeAllKernels } from "./liveKernels.js";
export { DEFAULT_LIMITS, type IsolationOptions, type IsolationBackend, type SandboxLimits } from "./IsolationOptions.js";
export type { HostMessage, KernelMessage, BridgeErrorPayload } from "./KernelMessage.js";
