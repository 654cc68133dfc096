import { lstatSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * What lllm trusts, as git's `safe.directory` does: files and folders of the current user's own, or root's (and,
 * under sudo, those of the user who ran sudo). Settings files run code (`lllm.config.mjs`) and point at homes and
 * prices; a home holds packages that run, keys and the run log. One left by another local user in a shared folder
 * (`/tmp`, a checkout on a shared disk) is ignored, with a warning naming it.
 */

/** The variable that trusts paths anyway: a list (`:`-separated; `;` on Windows) of files or folders, or `*` for all. */
export const TRUST_VARIABLE = "LLLM_TRUSTED_PATHS";

/**
 * Why the settings file `file` must not be read, or undefined when it may: it (or the link that names it) belongs
 * to another user, or anyone may write to it. A file that does not exist is not this function's business:
 * undefined.
 */
export function distrustFile(file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!hasOwners() || trustedByVariable(file, env)) return undefined;
  let link: Stats;
  let target: Stats;
  try {
    link = lstatSync(file);
    target = link.isSymbolicLink() ? statSync(file) : link;
  } catch {
    return undefined;
  }
  if (link.isSymbolicLink() && !trustedOwner(link.uid, env)) return `the link belongs to another user (uid ${link.uid})`;
  return distrustedStats(target, env);
}

/**
 * Why a file already open (`fstat` of its descriptor, so that it cannot be swapped between the check and the read)
 * is not this user's to trust: another user's, or one anyone may write to; undefined when it is.
 */
export function distrustOpenFile(stat: Stats, file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!hasOwners() || trustedByVariable(file, env)) return undefined;
  return distrustedStats(stat, env);
}

/** What `distrustFile` and `distrustOpenFile` judge of the file itself: its owner, and whether anyone may write to it. */
function distrustedStats(stat: Stats, env: NodeJS.ProcessEnv): string | undefined {
  if (!trustedOwner(stat.uid, env)) return `it belongs to another user (uid ${stat.uid})`;
  if ((stat.mode & 0o002) !== 0) return `anyone may write to it (mode ${modeText(stat)})`;
  return undefined;
}

/**
 * Why lllm must not keep its home (packages that run, keys, the run log, caches) in `folder`, or undefined when it
 * may: the folder belongs to another user or others may write to it; or a folder above it belongs to another user
 * or lets others write to it without the sticky bit (`/tmp` has it: others cannot rename what is ours there). A
 * folder not made yet is judged by the folders above it: lllm makes it 0700.
 */
export function distrustFolder(folder: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const absolute = path.resolve(folder);
  if (!hasOwners() || trustedByVariable(absolute, env)) return undefined;
  for (let current = absolute; ; current = path.dirname(current)) {
    const stat = statOf(current);
    if (stat !== undefined) {
      const where = current === absolute ? "it" : `the folder above it, ${current},`;
      if (!trustedOwner(stat.uid, env)) return `${where} belongs to another user (uid ${stat.uid})`;
      const sticky = current !== absolute && (stat.mode & 0o1000) !== 0;
      if (othersMayWrite(stat) && !sticky) return `others may write to ${current === absolute ? "it" : `the folder above it, ${current}`} (mode ${modeText(stat)})`;
    }
    if (path.dirname(current) === current) return undefined;
  }
}

/** The hint that goes with a warning: how to trust `target` anyway, when the user knows who else writes there. */
export function trustHint(target: string): string {
  return `to use it anyway: ${TRUST_VARIABLE}=${target}`;
}

/** Windows has no user ids and no mode bits to judge by (its modes read 0666 for every file). */
function hasOwners(): boolean {
  return process.platform !== "win32" && process.getuid !== undefined;
}

/** This user, root, and (for root under sudo) the user who ran sudo; everyone where there are no user ids. */
function trustedOwner(uid: number, env: NodeJS.ProcessEnv): boolean {
  const self = process.getuid!();
  if (uid === self || uid === 0) return true;
  return self === 0 && env.SUDO_UID !== undefined && env.SUDO_UID !== "" && Number(env.SUDO_UID) === uid;
}

/**
 * Writable by anyone, or by a group that is not this user's own (with umask 002 a user's files are writable by
 * the group of the same name, which holds that user alone).
 */
function othersMayWrite(stat: Stats): boolean {
  if ((stat.mode & 0o002) !== 0) return true;
  return (stat.mode & 0o020) !== 0 && stat.gid !== process.getgid?.();
}

function trustedByVariable(target: string, env: NodeJS.ProcessEnv): boolean {
  const list = env[TRUST_VARIABLE];
  if (list === undefined || list === "") return false;
  const absolute = path.resolve(target);
  return list.split(path.delimiter).some((entry) => {
    if (entry.trim() === "*") return true;
    if (entry === "") return false;
    const trusted = path.resolve(entry);
    return absolute === trusted || absolute.startsWith(trusted.endsWith(path.sep) ? trusted : trusted + path.sep);
  });
}

function statOf(target: string): Stats | undefined {
  try {
    return statSync(target);
  } catch {
    return undefined;
  }
}

function modeText(stat: Stats): string {
  return (stat.mode & 0o7777).toString(8).padStart(4, "0");
}
