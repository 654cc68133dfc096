import { SandboxError } from "../errors.js";
import { detectIsolation, type IsolationOptions } from "../sandbox/index.js";
import { detectGvisor, GVISOR_HINT } from "../sandbox/detectGvisor.js";
import { BWRAP_HINT } from "../sandbox/detectIsolation.js";

/** The size of a program's private /workspace unless `sandbox.workspace_size` says otherwise. */
export const DEFAULT_WORKSPACE_MB = 256;

/** Where the tactic whose code needs the sandbox comes from, for the error's advice. */
export interface IsolationOrigin {
  /**
   * The ref of the tactic when its file is in a package installed from a remote source (`lllm add`). Its `sandbox:`
   * cannot be changed in place (a run refuses a package whose cached files changed after consent): the way to choose
   * another backend is a tactic of your own with `base: <ref>`.
   */
  installedTactic?: string;
}

/**
 * Isolation for model-written programs (seed 002: no silent fallback): `auto` becomes bubblewrap, else gVisor,
 * and with neither the run fails before any model call, unless the tactic set `backend: none` on purpose; a
 * backend asked for by name is checked now too. The workspace is private and sized by default, so a program
 * cannot fill the host's disk.
 */
export async function requireIsolation(isolation: Partial<IsolationOptions>, what: string, origin: IsolationOrigin = {}): Promise<Partial<IsolationOptions>> {
  const sized = isolation.workspace === undefined && isolation.workspaceMb === undefined ? { ...isolation, workspaceMb: DEFAULT_WORKSPACE_MB } : isolation;
  const wanted = isolation.backend ?? "auto";
  if (wanted === "none") return sized;
  const bwrap = wanted === "gvisor" ? undefined : await detectIsolation();
  if (bwrap?.backend === "bwrap") return { ...sized, backend: "bwrap" };
  if (wanted === "bwrap") {
    throw new SandboxError("sandbox_unavailable", `${what} asked for bubblewrap isolation, which cannot run here: ${bwrap?.reason ?? "unknown reason"}`, { hint: `${BWRAP_HINT} Or ${chooseBackend("gvisor", origin)}.` });
  }
  const gvisor = await detectGvisor();
  if (gvisor.available) return { ...sized, backend: "gvisor" };
  if (wanted === "gvisor") {
    throw new SandboxError("sandbox_unavailable", `${what} asked for gVisor isolation, which cannot run here: ${gvisor.reason ?? "unknown reason"}`, { hint: `${GVISOR_HINT} Or ${chooseBackend("bwrap", origin)}.` });
  }
  throw new SandboxError("sandbox_unavailable", `${what} runs model-written code only in a sandbox, and none works here: ${bwrap?.reason ?? "bubblewrap is unavailable"}; ${gvisor.reason ?? "gVisor is unavailable"}`, {
    hint: `${BWRAP_HINT} ${GVISOR_HINT} To run the code without isolation (trusted code only), ${origin.installedTactic === undefined ? "set `sandbox: {backend: none}` in the tactic" : chooseBackend("none", origin)}.`,
  });
}

/** How to pick `backend`: in the tactic itself, or, for an installed package's tactic, in a tactic of your own over it. */
function chooseBackend(backend: IsolationOptions["backend"], origin: IsolationOrigin): string {
  if (origin.installedTactic === undefined) return `choose \`sandbox: {backend: ${backend}}\``;
  return `run a tactic of your own that says \`base: ${origin.installedTactic}\` and \`sandbox: {backend: ${backend}}\` (\`${origin.installedTactic}\` comes from an installed package, whose files cannot be edited: a run refuses a package changed after it was trusted)`;
}
