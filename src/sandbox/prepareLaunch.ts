import { randomInt } from "node:crypto";
import { chownSync, lchownSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SandboxError } from "../errors.js";
import { bwrapArguments, findSetpriv } from "./bwrapArguments.js";
import { detectGvisor, GVISOR_HINT } from "./detectGvisor.js";
import { BWRAP_HINT, detectIsolation } from "./detectIsolation.js";
import { findPython, type PythonInstall } from "./findPython.js";
import { hideEnvironmentSecrets } from "./hideEnvironmentSecrets.js";
import { runscArguments, writeGvisorBundle } from "./gvisorBundle.js";
import { seccompFilter } from "./seccompFilter.js";
import { resolveLimits, type IsolationOptions, type ResolvedBackend, type SandboxLimits } from "./IsolationOptions.js";
import { processTempDir } from "../util/processTempDir.js";

/** Everything needed to start (and restart) one kernel's process, and to clean up after it. */
export interface KernelLaunch {
  backend: ResolvedBackend;
  /** How the bridge reaches the kernel: fds 3 and 4, or (gVisor, which passes only stdio) stdin and stdout. */
  channel: "fds" | "stdio";
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The host folder the code works in (/workspace under bwrap and gVisor, unless limits.workspaceMb made it private). */
  workspace: string;
  limits: SandboxLimits;
  /**
   * Files opened read-only and passed as fds 5, 6, ... (bwrap's argument list and seccomp filter): bwrap's command
   * line stays short, so /proc/1/cmdline inside shows no host path.
   */
  fdFiles?: string[];
  /**
   * A seccomp filter (base64, see seccompFilter) the kernel installs on itself before anything else runs: under
   * gVisor, where runsc applies none of ours, and gVisor's kernel grants user namespaces (`unshare -Ur` made the
   * code root inside). bwrap applies the same filter from outside.
   */
  seccomp?: string;
  /** Called before each start of the process, a restart too (gVisor forgets the previous container's state). */
  beforeStart?: () => void;
  /** Remove what was made for the kernel; give a caller's workspace back its owner. Synchronous: it runs at exit. */
  dispose(): void;
}

export interface PrepareLaunchOptions {
  isolation: Partial<IsolationOptions>;
  /** The Python command; default `python3`. */
  python?: string;
  onWarning?: (message: string) => void;
}

// The path goes through the folder's name: it holds from dist/<folder>/ and from the bundle in dist/bundle/ alike.
const KERNEL_FILE = fileURLToPath(new URL("../sandbox/kernel.py", import.meta.url));
/** -I: no environment variables or user site; -S: no site hooks (kernel.py adds site-packages itself, faster). */
const PYTHON_FLAGS = ["-I", "-S", "-B", "-u", "-X", "utf8"];
/** Private user ids for kernels run by root: far above any account, one per kernel. */
const SANDBOX_UID_BASE = 1_800_000_000;
/** Temporary folders are named after the host's pid (`processTempDir`), so that a later host can tell which ones were orphaned. */
const RUNTIME_PREFIX = "lllm-kernel-";
/** Where spawnKernel puts `fdFiles` for bwrap: after the bridge's fds 3 and 4. */
const BWRAP_ARGS_FD = 5;
const BWRAP_SECCOMP_FD = 6;
let warned = false;

/** Pick the backend, find Python, make the workspace, and build the command line of a kernel. */
export async function prepareLaunch(options: PrepareLaunchOptions): Promise<KernelLaunch> {
  const backend = await chooseBackend(options);
  const python = await findPython(options.python);
  const limits = resolveLimits(options.isolation, backend.backend);
  const runtime = processTempDir(RUNTIME_PREFIX);
  const callerWorkspace = options.isolation.workspace === undefined ? undefined : path.resolve(options.isolation.workspace);
  const workspace = callerWorkspace ?? path.join(runtime, "workspace");
  mkdirSync(workspace, { recursive: true });
  const restore: Array<() => void> = [];
  const dispose = (): void => {
    for (const step of restore.splice(0)) step();
    rmSync(runtime, { recursive: true, force: true });
  };

  if (backend.backend === "none") {
    // The code runs as this user, who may read /proc/<our pid>/environ: our keys must not be there.
    const notHidden = hideEnvironmentSecrets();
    if (notHidden !== undefined) options.onWarning?.(`Python code runs without isolation, and lllm ${notHidden}: the code may read its keys in /proc/${process.pid}/environ.`);
    const env = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: workspace, LANG: "C.UTF-8", TMPDIR: tmpdir() };
    return { backend: "none", channel: "fds", command: python.executable, args: [...PYTHON_FLAGS, KERNEL_FILE], cwd: workspace, env, workspace, limits, dispose };
  }
  if (backend.backend === "gvisor") {
    try {
      return gvisorLaunch({ runsc: backend.runsc, rootless: backend.rootless, python, limits, runtime, workspace, callerWorkspace, restore, dispose });
    } catch (error) {
      dispose();
      throw error;
    }
  }

  try {
    const root = process.getuid?.() === 0;
    const filter = seccompFilter();
    const uid = root ? SANDBOX_UID_BASE + randomInt(100_000_000) : (process.getuid?.() ?? 65534);
    if (root) restore.push(lendFolder(workspace, uid, callerWorkspace !== undefined));
    const args = bwrapArguments({
      readOnly: python.folders,
      files: sandboxFiles(runtime, uid),
      ...(limits.workspaceMb === undefined ? { workspace } : { workspaceMb: limits.workspaceMb }),
      tmpMb: limits.fileSizeMb,
      path: [path.dirname(python.executable)],
      ...(root ? { dropToUid: uid, setpriv: findSetpriv() } : { disableUserns: backend.disableUserns }),
      ...(filter !== undefined ? { seccompFd: BWRAP_SECCOMP_FD } : {}),
      command: [python.executable, ...PYTHON_FLAGS, "/lllm/kernel.py"],
    });
    // The options (host paths among them) go in a file bwrap reads; only the command stays on its command line,
    // which is what /proc/1/cmdline shows inside. bwrap does not take the command from the file.
    const split = args.indexOf("--");
    const argsFile = path.join(runtime, "bwrap-args");
    writeFileSync(argsFile, args.slice(0, split).map((arg) => `${arg}\0`).join(""));
    const fdFiles = [argsFile];
    if (filter !== undefined) {
      writeFileSync(path.join(runtime, "seccomp.bpf"), filter);
      fdFiles.push(path.join(runtime, "seccomp.bpf"));
    }
    return { backend: "bwrap", channel: "fds", command: backend.bwrap, args: ["--args", String(BWRAP_ARGS_FD), ...args.slice(split)], fdFiles, cwd: workspace, env: {}, workspace, limits, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

type ChosenBackend = { backend: "none" } | { backend: "bwrap"; bwrap: string; disableUserns: boolean } | { backend: "gvisor"; runsc: string; rootless: boolean };

async function chooseBackend(options: PrepareLaunchOptions): Promise<ChosenBackend> {
  const wanted = options.isolation.backend ?? "auto";
  if (wanted === "none") return { backend: "none" };
  if (wanted === "gvisor") {
    const gvisor = await detectGvisor();
    if (gvisor.available && gvisor.runsc !== undefined) return { backend: "gvisor", runsc: gvisor.runsc, rootless: gvisor.rootless ?? false };
    throw new SandboxError("sandbox_unavailable", `the sandbox asked for gVisor isolation, which cannot run here: ${gvisor.reason ?? "unknown reason"}`, {
      hint: `${GVISOR_HINT} Or choose isolation backend "bwrap", or "none" for code you trust.`,
    });
  }
  const support = await detectIsolation();
  if (support.backend === "bwrap" && support.bwrap !== undefined) return { backend: "bwrap", bwrap: support.bwrap, disableUserns: support.disableUserns === true };
  if (wanted === "bwrap") {
    throw new SandboxError("sandbox_unavailable", `the sandbox asked for bubblewrap isolation, which cannot run here: ${support.reason ?? "unknown reason"}`, {
      hint: `${BWRAP_HINT} Or choose isolation backend "none" for code you trust.`,
    });
  }
  const gvisor = await detectGvisor();
  if (gvisor.available && gvisor.runsc !== undefined) return { backend: "gvisor", runsc: gvisor.runsc, rootless: gvisor.rootless ?? false };
  if (!warned && options.onWarning) {
    warned = true;
    options.onWarning(`Python code runs without isolation (${support.reason ?? "bubblewrap is unavailable"}). ${BWRAP_HINT} gVisor would do too: ${gvisor.reason ?? "it is unavailable"}.`);
  }
  return { backend: "none" };
}

/**
 * A kernel in gVisor: an OCI bundle in the runtime folder, run by `runsc run` with no network. The code runs as a
 * private user inside gVisor's kernel; a host workspace is lent to that user, as under bubblewrap.
 */
function gvisorLaunch(options: {
  runsc: string;
  rootless: boolean;
  python: PythonInstall;
  limits: SandboxLimits;
  runtime: string;
  workspace: string;
  callerWorkspace: string | undefined;
  restore: Array<() => void>;
  dispose: () => void;
}): KernelLaunch {
  const { python, limits, runtime, workspace } = options;
  const uid = options.rootless ? 65534 : SANDBOX_UID_BASE + randomInt(100_000_000);
  if (!options.rootless && limits.workspaceMb === undefined) options.restore.push(lendFolder(workspace, uid, options.callerWorkspace !== undefined));
  const bundle = path.join(runtime, "bundle");
  writeGvisorBundle(bundle, {
    readOnly: python.folders,
    files: sandboxFiles(runtime, uid),
    ...(limits.workspaceMb === undefined ? { workspace } : { workspaceMb: limits.workspaceMb }),
    tmpMb: limits.fileSizeMb,
    path: [path.dirname(python.executable)],
    uid,
    command: [python.executable, ...PYTHON_FLAGS, "/lllm/kernel.py"],
  });
  const state = path.join(runtime, "runsc-state");
  const containerId = (): string => `lllm-${process.pid}-${randomInt(1_000_000_000)}`;
  const args = runscArguments(bundle, state, containerId(), options.rootless);
  const filter = seccompFilter();
  return {
    backend: "gvisor",
    channel: "stdio",
    ...(filter !== undefined ? { seccomp: filter.toString("base64") } : {}),
    command: options.runsc,
    args,
    cwd: runtime,
    // A killed container leaves its state behind, and runsc refuses to start one with the same id over it; its
    // sandbox process may still hold the control socket named after the id for a moment: a new start takes a new id.
    beforeStart: () => {
      rmSync(state, { recursive: true, force: true });
      args[args.length - 1] = containerId();
    },
    env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin" },
    workspace,
    limits,
    dispose: options.dispose,
  };
}

/** The files every sandbox mounts (sandbox path -> host path): a passwd and group naming its user, and the kernel. */
function sandboxFiles(runtime: string, uid: number): Record<string, string> {
  writeFileSync(path.join(runtime, "passwd"), `sandbox:x:${uid}:${uid}:sandbox:/workspace:/bin/sh\n`);
  writeFileSync(path.join(runtime, "group"), `sandbox:x:${uid}:\n`);
  return { "/etc/passwd": path.join(runtime, "passwd"), "/etc/group": path.join(runtime, "group"), "/lllm/kernel.py": KERNEL_FILE };
}

/**
 * Make `folder` writable by the sandbox's user. A folder we made is simply given away (it is deleted on close); a
 * caller's folder gets its owner back, together with every file the sandbox created in it.
 */
function lendFolder(folder: string, uid: number, callerOwned: boolean): () => void {
  const owner = statSync(folder);
  chownSync(folder, uid, uid);
  if (!callerOwned) return () => {};
  return () => giveBack(folder, uid, owner.uid, owner.gid);
}

function giveBack(file: string, uid: number, ownerUid: number, ownerGid: number): void {
  try {
    const stat = lstatSync(file);
    if (stat.uid === uid) lchownSync(file, ownerUid, ownerGid); // never follow a link the code made
    if (stat.isDirectory()) for (const name of readdirSync(file)) giveBack(path.join(file, name), uid, ownerUid, ownerGid);
  } catch {
    // removed meanwhile
  }
}

