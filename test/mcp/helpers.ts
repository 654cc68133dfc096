import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { McpServerConfig } from "../../src/config/TacticConfig.js";

export { ROOT } from "../helpers/paths.js";
export const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
export const FILESYSTEM = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
export const JITI = fileURLToPath(new URL("../../node_modules/jiti/lib/jiti-cli.mjs", import.meta.url));
export const FIXTURE = fileURLToPath(new URL("./fixtures/stdioServer.mjs", import.meta.url));

/** A stdio server run by this very node binary (never npx: no network in tests). */
export function nodeServer(name: string, script: string, extra: Partial<McpServerConfig> = {}, args: string[] = []): McpServerConfig {
  return { name, command: process.execPath, args: [script, ...args], ...extra };
}

/**
 * Whether a process with this pid is running. A zombie (exited, not yet reaped: orphans in a container whose
 * pid 1 does not reap) has exited, so it counts as dead.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true; // no /proc (macOS): kill(0) succeeded
  }
}
