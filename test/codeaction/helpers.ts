import path from "node:path";
import { ArtifactStore, approveNone, runProgram, type ApprovalPolicy, type ProgramOutcome } from "../../src/codeaction/index.js";
import { detectGvisor, detectIsolation, type ResolvedBackend } from "../../src/sandbox/index.js";
import type { FunctionTool } from "../../src/tools/index.js";
import { tempDir } from "../helpers/tempTree.js";

/** The isolating backends this machine has: the security tests run under each. */
export const BACKENDS: ResolvedBackend[] = [
  ...((await detectIsolation()).backend === "bwrap" ? ["bwrap" as const] : []),
  ...((await detectGvisor()).available ? ["gvisor" as const] : []),
];
/** The fastest backend that isolates (bubblewrap), else none: for tests about the bridge, not the sandbox. */
export const FAST: ResolvedBackend = BACKENDS[0] ?? "none";

/** A store in a fresh temporary folder (removed after the test file, see test/helpers/setup.ts). */
export function tempStore(): ArtifactStore {
  return new ArtifactStore(path.join(tempDir("lllm-artifacts-"), "artifacts"));
}

/**
 * Run one program over `tools` as code-action would, with a small cap on tool calls and a time limit far above what
 * a busy machine needs (a fork or memory bomb, a gVisor start, take many seconds there).
 */
export function program(code: string, tools: FunctionTool[], options: { maxToolCalls?: number; execTimeout?: number; backend?: ResolvedBackend; approval?: ApprovalPolicy; artifacts?: ArtifactStore } = {}): Promise<ProgramOutcome> {
  return runProgram(code, {
    tools,
    maxToolCalls: options.maxToolCalls ?? 20,
    execTimeout: options.execTimeout ?? 120,
    isolation: { backend: options.backend ?? FAST, workspaceMb: 64 },
    maxOutputChars: 100_000,
    approval: options.approval ?? approveNone,
    artifacts: options.artifacts ?? tempStore(),
    context: {},
  });
}
