import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { bwrapArguments, findSetpriv } from "./bwrapArguments.js";

/** What isolation this machine offers: the backend `auto` picks, and why not bubblewrap when it cannot. */
export interface IsolationSupport {
  backend: "bwrap" | "none";
  /** Why bubblewrap cannot be used; absent when it can. */
  reason?: string;
  /** The bwrap program, when it works. */
  bwrap?: string;
  /** bwrap can forbid user namespaces inside (`--disable-userns`, bwrap >= 0.8, not as root). */
  disableUserns?: boolean;
}

/** How to get bubblewrap, for error messages and warnings. */
export const BWRAP_HINT = "Install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`); in a container, allow user namespaces or run it privileged.";

let probe: Promise<IsolationSupport> | undefined;

/**
 * Whether bubblewrap is installed and can start a sandbox here, probed once per process by running `true` in a
 * sandbox built like a kernel's (namespaces, mounts and, as root, the switch to an unprivileged user).
 */
export function detectIsolation(): Promise<IsolationSupport> {
  probe ??= runProbe();
  return probe;
}

async function runProbe(): Promise<IsolationSupport> {
  if (process.platform !== "linux") return { backend: "none", reason: `bubblewrap needs Linux (this is ${process.platform})` };
  const bwrap = onPath("bwrap");
  if (bwrap === undefined) return { backend: "none", reason: "bwrap is not installed" };
  const root = process.getuid?.() === 0;
  const setpriv = root ? findSetpriv() : undefined;
  if (root && setpriv === undefined) return { backend: "none", reason: "running as root needs setpriv (util-linux) to drop privileges in the sandbox" };
  const attempt = (disableUserns: boolean): Promise<string | undefined> => {
    const args = bwrapArguments({ readOnly: [], tmpMb: 1, command: ["true"], ...(root ? { dropToUid: 65534, setpriv } : { disableUserns }) });
    return new Promise((resolve) => {
      execFile(bwrap, args, { timeout: 10_000, env: {} }, (error, _stdout, stderr) => resolve(error ? stderr.trim() || error.message : undefined));
    });
  };
  // Without root bwrap works in a user namespace of its own; a bwrap older than 0.8 lacks --disable-userns (the
  // seccomp filter still refuses new user namespaces).
  if (!root && (await attempt(true)) === undefined) return { backend: "bwrap", bwrap, disableUserns: true };
  const failure = await attempt(false);
  if (failure !== undefined) return { backend: "none", reason: `bwrap cannot start a sandbox here: ${failure}` };
  return { backend: "bwrap", bwrap };
}

/** The first executable `program` on PATH. */
export function onPath(program: string): string | undefined {
  for (const folder of (process.env.PATH ?? "/usr/bin:/bin").split(path.delimiter)) {
    if (folder === "") continue;
    const candidate = path.join(folder, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
