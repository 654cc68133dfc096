import os from "node:os";
import path from "node:path";
import { distrustFolder, trustHint } from "./distrust.js";
import { warnOnce } from "./warnOnce.js";

/**
 * Each `LLLM_HOME` (and `LLLM_CODE_CACHE`) judged in this process, with the verdict: it is asked for often (each run,
 * each package load).
 */
const judged = new Map<string, string | undefined>();

/**
 * `$LLLM_HOME`, default `~/.lllm`: where lllm keeps packages, caches, run artifacts, keys and the run store. An
 * `LLLM_HOME` of another user's, or one others may write to (see `distrustFolder`), is not used: lllm warns once,
 * naming it, and keeps to `~/.lllm` (a package planted there would run, and keys and runs written there be read).
 */
export function lllmHome(env: NodeJS.ProcessEnv = process.env): string {
  // Asked for each run (a server's, a batch's): the default is made only when it is the answer.
  const named = env.LLLM_HOME;
  if (!named) return path.join(os.homedir(), ".lllm");
  const home = path.resolve(named);
  const distrust = verdict("LLLM_HOME", home, env);
  if (distrust === undefined) return home;
  const fallback = path.join(os.homedir(), ".lllm");
  warnOnce(`ignored LLLM_HOME=${home}: ${distrust}; lllm uses ${fallback} instead (${trustHint(home)})`);
  return fallback;
}

/**
 * The folder of lllm's code caches: V8's compiled code (`node/`, `v8/`), tools' argument validators as generated code
 * (`validators/`), package files transpiled (`jiti/`) and the data of parsed config files (`yaml/`). `LLLM_CODE_CACHE`
 * when set, else `$LLLM_HOME/cache`. Each entry is keyed by what it was made from (a file's path and content, Node's
 * version), so one folder serves any number of homes: a CI job or a container that starts each run with a fresh home
 * keeps its compiled code in a folder that outlives it, and a run pays its cold start once, not every time. The
 * caches of a home's own data stay in its `cache/` (proxy responses, sign-ins). lllm runs the code it finds there,
 * so a folder of another user's, or one others may write to, is not used (as for `LLLM_HOME`): lllm warns once and
 * keeps to `$LLLM_HOME/cache`.
 */
export function codeCacheFolder(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.LLLM_CODE_CACHE;
  if (!named) return path.join(lllmHome(env), "cache");
  const folder = path.resolve(named);
  const distrust = verdict("LLLM_CODE_CACHE", folder, env);
  if (distrust === undefined) return folder;
  const fallback = path.join(lllmHome(env), "cache");
  warnOnce(`ignored LLLM_CODE_CACHE=${folder}: ${distrust}; lllm uses ${fallback} instead (${trustHint(folder)})`);
  return fallback;
}

/** Why lllm must not use `folder`, which `variable` names (see `distrustFolder`), or undefined: judged once. */
function verdict(variable: string, folder: string, env: NodeJS.ProcessEnv): string | undefined {
  const key = `${variable}\0${folder}\0${env.LLLM_TRUSTED_PATHS ?? ""}\0${env.SUDO_UID ?? ""}`;
  if (!judged.has(key)) judged.set(key, distrustFolder(folder, env));
  return judged.get(key);
}
