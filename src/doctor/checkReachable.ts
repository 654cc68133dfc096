import { nodeHttpFetch } from "../util/nodeHttpFetch.js";
import { proxyEnvironment } from "../util/proxyEnvironment.js";
import { maskUrlCredentials } from "../util/urlCredentials.js";
import type { DoctorCheck } from "./DoctorCheck.js";

/** How long one reachability request may take. */
export const REACH_TIMEOUT_MS = 5000;

/**
 * One GET of a server's base URL, without a key, through the environment's HTTP proxy as the model clients go:
 * any HTTP answer (a 401 or 404 too) means the server is there. `needed`: a failure is `fail`, else `warn`.
 */
export async function checkReachable(url: string, options: { env: NodeJS.ProcessEnv; needed: boolean; what: string }): Promise<DoctorCheck> {
  const shown = maskUrlCredentials(url, "***");
  const name = `reach ${shown}`;
  let proxies;
  try {
    proxies = proxyEnvironment(options.env);
  } catch {
    proxies = undefined; // a bad proxy setting is the model's own error to report; try directly
  }
  try {
    const response = await nodeHttpFetch(url, { redirect: "manual", signal: AbortSignal.timeout(REACH_TIMEOUT_MS) }, { ...(proxies ? { proxies } : {}), maxReplyBytes: 65_536 });
    await response.body?.cancel().catch(() => undefined);
    return { name, status: "ok", detail: `${options.what}: answers (HTTP ${response.status})` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = (error as Error).name === "TimeoutError" ? `no answer within ${REACH_TIMEOUT_MS / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { name, status: options.needed ? "fail" : "warn", detail: `${options.what}: cannot be reached (${reason})`, fix: "check the URL, the network, and HTTPS_PROXY if you need one" };
  }
}
