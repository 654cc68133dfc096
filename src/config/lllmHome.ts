import os from "node:os";
import path from "node:path";
import { distrustFolder, trustHint } from "./distrust.js";
import { warnOnce } from "./warnOnce.js";

/** Each `LLLM_HOME` judged in this process, with the verdict: it is asked for often (each run, each package load). */
const judged = new Map<string, string | undefined>();

/**
 * `$LLLM_HOME`, default `~/.lllm`: where lllm keeps packages, caches, run artifacts, keys and the run store. An
 * `LLLM_HOME` of another user's, or one others may write to (see `distrustFolder`), is not used: lllm warns once,
 * naming it, and keeps to `~/.lllm` (a package planted there would run, and keys and runs written there be read).
 */
export function lllmHome(env: NodeJS.ProcessEnv = process.env): string {
  const fallback = path.join(os.homedir(), ".lllm");
  if (!env.LLLM_HOME) return fallback;
  const home = path.resolve(env.LLLM_HOME);
  const key = `${home}\0${env.LLLM_TRUSTED_PATHS ?? ""}\0${env.SUDO_UID ?? ""}`;
  if (!judged.has(key)) judged.set(key, distrustFolder(home, env));
  const distrust = judged.get(key);
  if (distrust === undefined) return home;
  warnOnce(`ignored LLLM_HOME=${home}: ${distrust}; lllm uses ${fallback} instead (${trustHint(home)})`);
  return fallback;
}
