import os from "node:os";
import path from "node:path";

/** `$LLLM_HOME`, default `~/.lllm`: where lllm keeps packages, caches, run artifacts and the run store. */
export function lllmHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.LLLM_HOME && env.LLLM_HOME.length > 0 ? path.resolve(env.LLLM_HOME) : path.join(os.homedir(), ".lllm");
}
