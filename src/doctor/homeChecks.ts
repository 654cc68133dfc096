import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { keysFile, readKeys } from "../config/keysFile.js";
import { distrustFolder } from "../config/distrust.js";
import { lllmHome } from "../config/lllmHome.js";
import { RunStore } from "../store/RunStore.js";
import { storeFile } from "../store/startRunLog.js";
import type { DoctorCheck } from "./DoctorCheck.js";

/** `$LLLM_HOME` (mode, owner), `LLLM_CODE_CACHE` when set, the keys file, and the run store (opens, writable, size). */
export async function homeChecks(options: { env: NodeJS.ProcessEnv; storeHome?: string }): Promise<DoctorCheck[]> {
  const codeCache = codeCacheCheck(options.env);
  return [homeCheck(lllmHome(options.env)), ...(codeCache ? [codeCache] : []), keysCheck(keysFile(options.env)), await storeCheck(storeFile(options.env, options.storeHome))];
}

/** The folder `LLLM_CODE_CACHE` names, judged as every command judges it (see codeCacheFolder). */
function codeCacheCheck(env: NodeJS.ProcessEnv): DoctorCheck | undefined {
  if (!env.LLLM_CODE_CACHE) return undefined;
  const folder = path.resolve(env.LLLM_CODE_CACHE);
  const distrust = distrustFolder(folder, env);
  if (distrust === undefined) return { name: "code cache", status: "ok", detail: `${folder} (LLLM_CODE_CACHE)` };
  // lllm works without it (from the home's cache): slower, never wrong.
  return {
    name: "code cache",
    status: "warn",
    detail: `LLLM_CODE_CACHE=${folder} is not used: ${distrust}; lllm keeps its compiled code in ${path.join(lllmHome(env), "cache")}`,
    fix: "name a folder of your own that no one else can write to, or unset LLLM_CODE_CACHE",
  };
}

function homeCheck(home: string): DoctorCheck {
  let stat;
  try {
    stat = statSync(home);
  } catch {
    return { name: "lllm home", status: "ok", detail: `${home} does not exist yet (created, readable by you alone, when first needed)` };
  }
  if (!stat.isDirectory()) return { name: "lllm home", status: "fail", detail: `${home} is not a folder`, fix: "remove it, or set LLLM_HOME to a folder" };
  if (process.platform === "win32") return { name: "lllm home", status: "ok", detail: home };
  const mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return { name: "lllm home", status: "warn", detail: `${home} belongs to another user (uid ${stat.uid}): lllm keeps no cache there`, fix: "set LLLM_HOME to a folder of your own" };
  if ((stat.mode & 0o022) !== 0) return { name: "lllm home", status: "warn", detail: `${home} may be written by others (mode ${mode}): lllm keeps no cache there`, fix: `chmod 700 ${home}` };
  if ((stat.mode & 0o077) !== 0) return { name: "lllm home", status: "warn", detail: `${home} may be read by others (mode ${mode}): it holds the run log and keys`, fix: `chmod 700 ${home}` };
  return { name: "lllm home", status: "ok", detail: `${home} (mode ${mode})` };
}

function keysCheck(file: string): DoctorCheck {
  try {
    const names = Object.keys(readKeys(file)).sort();
    return { name: "keys file", status: "ok", detail: names.length === 0 ? `no keys stored (${file})` : `${names.join(", ")} (${file})` };
  } catch (error) {
    // Every command refuses such a file: nothing works until it is fixed.
    return { name: "keys file", status: "fail", detail: (error as Error).message, fix: (error as { hint?: string }).hint ?? `fix or remove ${file}` };
  }
}

async function storeCheck(file: string): Promise<DoctorCheck> {
  if (!RunStore.exists(file)) {
    const folder = nearestFolder(path.dirname(file));
    try {
      accessSync(folder, constants.W_OK);
      return { name: "run store", status: "ok", detail: `${file} not created yet (the first run creates it)` };
    } catch {
      return { name: "run store", status: "warn", detail: `${file} cannot be created: ${folder} is not writable`, fix: "make the folder writable, set LLLM_HOME elsewhere, or run with --no-log" };
    }
  }
  let store: RunStore | undefined;
  try {
    store = await RunStore.open(file);
    const runs = store.listRuns({ limit: 1 }).length;
    accessSync(file, constants.W_OK);
    const size = megabytes(file) + megabytes(`${file}-wal`);
    return { name: "run store", status: "ok", detail: `${file} (${size.toFixed(1)} MB${runs === 0 ? ", no runs" : ""})`, ...(size > 1024 ? { fix: "over 1 GB: lllm logs prune --older-than 30d" } : {}) };
  } catch (error) {
    return { name: "run store", status: "warn", detail: `${file}: ${(error as Error).message}`, fix: (error as { hint?: string }).hint ?? "runs still work with --no-log" };
  } finally {
    store?.close();
  }
}

function megabytes(file: string): number {
  try {
    return statSync(file).size / 1024 / 1024;
  } catch {
    return 0;
  }
}

/** The folder itself, or its nearest existing parent (what creating it needs to write to). */
function nearestFolder(folder: string): string {
  for (let current = folder; ; current = path.dirname(current)) {
    try {
      if (statSync(current).isDirectory()) return current;
    } catch {
      // not there yet
    }
    if (path.dirname(current) === current) return current;
  }
}
