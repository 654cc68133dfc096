import { fillFromKeys, keysFile, readKeys } from "../config/keysFile.js";
import { PROVIDER_ROUTES } from "../providers/providerRoutes.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { checkReachable } from "./checkReachable.js";
import { checkRedis } from "./checkRedis.js";
import type { DoctorCheck } from "./DoctorCheck.js";
import { homeChecks } from "./homeChecks.js";
import { machineChecks } from "./machineChecks.js";
import { tacticChecks, tacticNeeds, type KeySources } from "./tacticChecks.js";

export interface DoctorOptions {
  /** The tactic to check for (loaded and bound already): its keys, servers, Python and sandbox become needs. */
  prepared?: PreparedTactic;
  /** `--model`: the model every agent would use. */
  model?: string;
  /** `--queue URL`: a Redis that must answer. */
  queue?: string;
  /** The project settings' `home:` (where the run store is). */
  storeHome?: string;
  env?: NodeJS.ProcessEnv;
}

/** Every check `lllm doctor` makes, in the order printed. */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const env = options.env ?? process.env;
  const keys = keySources(env);
  const needs = options.prepared ? tacticNeeds(options.prepared) : { python: false };
  const checks = [...(await machineChecks(needs)), ...(await homeChecks({ env, ...(options.storeHome ? { storeHome: options.storeHome } : {}) }))];
  if (options.prepared) checks.push(...(await tacticChecks(options.prepared, { ...(options.model ? { model: options.model } : {}), keys })));
  else checks.push(...(await providerChecks(keys)));
  if (options.queue !== undefined) checks.push(...(await checkRedis(options.queue)));
  return checks;
}

/** The environment as commands see it: the keys file's values fill what the environment leaves unset. */
function keySources(env: NodeJS.ProcessEnv): KeySources {
  let stored: Record<string, string> = {};
  try {
    stored = readKeys(keysFile(env));
  } catch {
    // reported by the keys file check
  }
  const merged: NodeJS.ProcessEnv = { ...env };
  return { env: merged, fromFile: fillFromKeys(merged, stored) };
}

/** Without a tactic: which providers have a key, and whether the base URLs set in the environment answer. */
async function providerChecks(keys: KeySources): Promise<DoctorCheck[]> {
  const set: string[] = [];
  const servers: Array<{ url: string; variable: string }> = [];
  for (const route of PROVIDER_ROUTES) {
    for (const variable of [route.apiKeyEnv, route.altApiKeyEnv]) {
      if (variable !== undefined && (keys.env[variable] ?? "") !== "") set.push(`${variable} (${keys.fromFile.has(variable) ? "keys file" : "environment"})`);
    }
    const url = route.baseURLEnv ? keys.env[route.baseURLEnv] : undefined;
    if (route.baseURLEnv && url) servers.push({ url, variable: route.baseURLEnv });
  }
  const checks: DoctorCheck[] = [
    set.length > 0
      ? { name: "provider keys", status: "ok", detail: set.join(", ") }
      : { name: "provider keys", status: "warn", detail: "no provider's key is set (scripted: models and local servers need none)", fix: "lllm keys set openai (or anthropic, gemini, …), or export OPENAI_API_KEY=…" },
  ];
  for (const server of servers) checks.push(await checkReachable(server.url, { env: keys.env, needed: false, what: server.variable }));
  return checks;
}
