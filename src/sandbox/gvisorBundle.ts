import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { etcFiles, systemFolders, type BwrapLayout } from "./bwrapArguments.js";

/** What a gVisor sandbox needs: the same layout as a bubblewrap one, as an OCI bundle, and the user the code runs as. */
export type GvisorLayout = Omit<BwrapLayout, "dropToUid" | "setpriv"> & {
  /** The user the code runs as, inside gVisor's own kernel. */
  uid: number;
};

/**
 * The kernel speaks on fds 3 and 4, but runsc passes only stdin, stdout and stderr into the sandbox: a shell moves
 * them there (stdin -> 3, stdout -> 4) and points 0 and 1 away, before it becomes the command.
 */
export const STDIO_TO_BRIDGE = ["/bin/sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 </dev/null >&2'];

/**
 * Write an OCI bundle for `runsc run` into `folder` (config.json and an empty read-only root with the system
 * links): new pid, ipc, uts and mount namespaces inside gVisor's own kernel, no network (runsc --network=none),
 * no capabilities, no new privileges, a read-only /usr and Python install, a private /tmp, a clean environment.
 */
export function writeGvisorBundle(folder: string, layout: GvisorLayout): string {
  const rootfs = path.join(folder, "rootfs");
  mkdirSync(rootfs, { recursive: true });
  const mounts: Array<Record<string, unknown>> = [
    { destination: "/proc", type: "proc", source: "proc" },
    // The root is read-only and gVisor's /dev belongs to its root, so the sized /tmp and /workspace are all the code
    // may write to. /tmp must stay a mount of its own: without one, runsc mounts a tmpfs of no size there.
    { destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777", `size=${Math.ceil(layout.tmpMb * 1024)}k`] },
  ];
  const bind = (source: string, destination: string, writable = false): void => {
    mounts.push({ destination, type: "bind", source, options: ["rbind", writable ? "rw" : "ro"] });
  };
  bind("/usr", "/usr");
  for (const { folder: system, link } of systemFolders()) {
    if (link !== undefined) symlinkSync(link, path.join(rootfs, system));
    else bind(system, system);
  }
  for (const file of etcFiles()) bind(file, file);
  for (const readOnly of layout.readOnly) if (readOnly !== "/usr" && !readOnly.startsWith("/usr/")) bind(readOnly, readOnly);
  for (const [target, source] of Object.entries(layout.files ?? {})) bind(source, target);
  if (layout.workspace !== undefined) bind(layout.workspace, "/workspace", true);
  else mounts.push({ destination: "/workspace", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777", `size=${Math.ceil((layout.workspaceMb ?? 64) * 1024)}k`] });
  const searchPath = [...(layout.path ?? []), "/usr/local/bin", "/usr/bin", "/bin"].join(":");
  const config = {
    ociVersion: "1.0.0",
    process: {
      terminal: false,
      user: { uid: layout.uid, gid: layout.uid },
      args: [...STDIO_TO_BRIDGE, ...layout.command],
      env: [`PATH=${searchPath}`, "HOME=/workspace", "LANG=C.UTF-8", "TMPDIR=/tmp"],
      cwd: "/",
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      noNewPrivileges: true,
      rlimits: [{ type: "RLIMIT_CORE", hard: 0, soft: 0 }],
    },
    root: { path: "rootfs", readonly: true },
    hostname: "sandbox",
    mounts,
    linux: { namespaces: [{ type: "pid" }, { type: "network" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }] },
  };
  writeFileSync(path.join(folder, "config.json"), JSON.stringify(config, null, 1));
  return folder;
}

/**
 * The runsc command line that runs the bundle in `folder`, keeping its state in `state`. --ignore-cgroups: the
 * bundle sets no cgroup limit (the host's watchdog holds the sandbox to its memory limit), and a runsc killed when
 * its kernel closes could not remove the cgroups it made, one per container in every hierarchy, for good.
 */
export function runscArguments(folder: string, state: string, id: string, rootless: boolean): string[] {
  return [...(rootless ? ["--rootless"] : []), "--network=none", "--ignore-cgroups", `--root=${state}`, "run", `--bundle=${folder}`, id];
}
