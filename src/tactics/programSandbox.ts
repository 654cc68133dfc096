import { requireIsolation } from "../codeaction/requireIsolation.js";
import type { IsolationOptions } from "../sandbox/index.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { isolationOrigin, programOutputChars, sandboxIsolation, sandboxLocator } from "./sandboxIsolation.js";

/** Where model-written programs of a tactic run: the checked isolation and the cap on what a program prints. */
export interface ProgramSandbox {
  isolation: Partial<IsolationOptions>;
  maxOutputChars: number;
}

/**
 * The sandbox for a tactic's programs (code-action, tool_chain, notebook cells), from its `sandbox:` block, checked
 * to work now: a run that cannot be isolated must fail (or leave the tool out) before any model call spends tokens.
 * `what` names the user of the sandbox in the error (`code-action`, `the tool_chain of agent \`a\``).
 */
export async function programSandbox(prepared: PreparedTactic, what: string): Promise<ProgramSandbox> {
  const { sandbox } = prepared.tactic.config;
  const locate = sandboxLocator(prepared.tactic);
  const isolation = await requireIsolation(sandboxIsolation(sandbox, locate), what, isolationOrigin(prepared));
  return { isolation, maxOutputChars: programOutputChars(sandbox, locate) };
}
