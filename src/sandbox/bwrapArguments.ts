import { existsSync, lstatSync, readlinkSync } from "node:fs";
import path from "node:path";

/** What a bubblewrap sandbox needs beyond the system folders. */
export interface BwrapLayout {
  /** Host folders mounted read-only at the same path (the Python install). */
  readOnly: readonly string[];
  /** Host files mounted read-only elsewhere: sandbox path -> host path (the kernel, /etc/passwd). */
  files?: Readonly<Record<string, string>>;
  /** The host folder mounted writable at /workspace, the working folder. */
  workspace?: string;
  /** Instead of `workspace`: a private in-memory /workspace of this size in MB (the code cannot fill the host's disk). */
  workspaceMb?: number;
  /**
   * Size of the private scratch space, in MB: one tmpfs at /dev/shm (where POSIX semaphores and shared memory live,
   * which multiprocessing needs), with /tmp a link to it, so the two share one bound.
   */
  tmpMb: number;
  /** Extra folders for PATH, before the system's. */
  path?: readonly string[];
  /**
   * When the host runs as root: the user id the code runs as, set with setpriv. Root ignores the process limit
   * (RLIMIT_NPROC), and a user namespace would map the sandbox's user back to root, so privileges are dropped for
   * real: a private id per kernel keeps one kernel's process count apart from another's.
   */
  dropToUid?: number;
  /** The setpriv program (inside /usr), needed with `dropToUid`. */
  setpriv?: string;
  /** The descriptor bwrap reads a seccomp filter from (see seccompFilter). */
  seccompFd?: number;
  /** Forbid new user namespaces inside (`--disable-userns`; it needs bwrap's own user namespace, the non-root case). */
  disableUserns?: boolean;
  command: readonly string[];
}

/** System paths every program needs; /etc gets only what the loader and libc read, never the host's secrets. */
const SYSTEM_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/mime.types"];

/**
 * The bwrap command line for `layout`: new pid, network, ipc and uts namespaces (no network at all, only a
 * loopback), a read-only root, /usr and Python install, a private /proc and read-only /dev, a sized scratch space
 * (/dev/shm, and /tmp linked to it), a writable /workspace, a clean environment with no host variables, a new
 * session (no terminal injection), and death with the parent.
 */
export function bwrapArguments(layout: BwrapLayout): string[] {
  const args = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"];
  args.push("--ro-bind", "/usr", "/usr");
  for (const { folder, link } of systemFolders()) {
    if (link !== undefined) args.push("--symlink", link, folder);
    else args.push("--ro-bind", folder, folder);
  }
  args.push("--perms", "0755", "--dir", "/etc");
  for (const file of ETC_FILES) args.push("--ro-bind-try", file, file);
  // bwrap copies the mode of a missing parent from the host (/root is 0700) or makes it 0700, which would hide what
  // is mounted below from the unprivileged user: create the parents as 0755 first.
  const made = new Set<string>(["/", "/usr", "/etc", "/tmp", "/workspace", "/proc", "/dev"]);
  const makeParents = (target: string): void => {
    for (const parent of parents(target)) {
      if (made.has(parent)) continue;
      made.add(parent);
      args.push("--perms", "0755", "--dir", parent);
    }
  };
  for (const folder of layout.readOnly) {
    if (folder === "/usr" || folder.startsWith("/usr/")) continue;
    makeParents(folder);
    args.push("--ro-bind", folder, folder);
  }
  for (const [target, source] of Object.entries(layout.files ?? {})) {
    makeParents(target);
    args.push("--ro-bind", source, target);
  }
  // bwrap's own tmpfs for / and /dev have no size, and without root they belong to the sandbox's user: writable,
  // without bound, and in memory that no process's RSS shows. The only writable places are the sized scratch space
  // (/dev/shm, with /tmp a link to it: one bound for both, not one each) and /workspace; / and /dev are made
  // read-only once everything is mounted in them.
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--perms", "1777", "--size", String(Math.ceil(layout.tmpMb * 1024 * 1024)), "--tmpfs", "/dev/shm");
  args.push("--remount-ro", "/dev"); // not recursive: /dev/shm and /dev/pts stay as they are
  args.push("--symlink", "/dev/shm", "/tmp");
  // No --chdir: bwrap would change folder before the switch of user, as a root without CAP_DAC_OVERRIDE, which a
  // caller's 0700 workspace refuses. The kernel changes to /workspace itself (init's `cwd`).
  if (layout.workspace !== undefined) args.push("--bind", layout.workspace, "/workspace");
  else if (layout.workspaceMb !== undefined) args.push("--perms", "1777", "--size", String(Math.ceil(layout.workspaceMb * 1024 * 1024)), "--tmpfs", "/workspace");
  args.push("--remount-ro", "/"); // last of the mounts: bwrap writes the folders, links and mount points above into it
  const searchPath = [...(layout.path ?? []), "/usr/local/bin", "/usr/bin", "/bin"].join(":");
  args.push("--clearenv", "--setenv", "PATH", searchPath, "--setenv", "HOME", layout.workspace === undefined && layout.workspaceMb === undefined ? "/tmp" : "/workspace");
  args.push("--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp");
  if (layout.disableUserns === true) args.push("--unshare-user", "--disable-userns");
  if (layout.seccompFd !== undefined) args.push("--seccomp", String(layout.seccompFd));
  if (layout.dropToUid !== undefined) {
    // Only what setpriv needs to switch users survives into the sandbox; setpriv then drops those too.
    args.push("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--");
    const id = String(layout.dropToUid);
    args.push(layout.setpriv ?? "/usr/bin/setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--");
  } else {
    args.push("--");
  }
  args.push(...layout.command);
  return args;
}

/** The system folders of this machine: a link (merged /usr) is copied as a link, a folder is mounted read-only. */
export function systemFolders(): Array<{ folder: string; link?: string }> {
  const found: Array<{ folder: string; link?: string }> = [];
  for (const folder of SYSTEM_LINKS) {
    const stat = lstatOrUndefined(folder);
    if (stat?.isSymbolicLink()) found.push({ folder, link: readlinkSync(folder) });
    else if (stat?.isDirectory()) found.push({ folder });
  }
  return found;
}

/** The files of /etc that a sandbox gets (those that exist here). */
export function etcFiles(): string[] {
  return ETC_FILES.filter((file) => lstatOrUndefined(file) !== undefined);
}

/** The setpriv program, when it is installed where the sandbox sees it. */
export function findSetpriv(): string | undefined {
  return ["/usr/bin/setpriv", "/usr/sbin/setpriv"].find((file) => existsSync(file));
}

function parents(folder: string): string[] {
  const result: string[] = [];
  for (let parent = path.dirname(folder); parent !== "/" && parent !== "."; parent = path.dirname(parent)) result.unshift(parent);
  return result;
}

function lstatOrUndefined(file: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}
