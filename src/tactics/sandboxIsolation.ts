import type { SandboxConfig } from "../config/index.js";
import { ConfigError, type SourceLocation } from "../errors.js";
import type { IsolationOptions } from "../sandbox/index.js";
import { megabytesOf } from "../util/megabytesOf.js";

/** A program's printed answer is kept up to this size unless `sandbox.output_size` says otherwise (1 MB). */
const DEFAULT_OUTPUT_CHARS = 1024 * 1024;

/**
 * `512`, `"512M"`, `"1G"`, `"64K"`, `"1.5g"` -> megabytes. A bare number is megabytes, as the schema says, and a
 * byte count mistaken for megabytes would lift the limit: refused.
 */
function parseMegabytes(value: string | number, key: string, where?: SourceLocation): number {
  if (typeof value === "number" && value > 1024 * 1024) {
    throw new ConfigError("sandbox_invalid", `sandbox.${key} ${value} would be ${value} megabytes: a bare number is megabytes`, { ...(where ? { location: where } : {}), hint: `Write a size with its unit, e.g. "${Math.max(1, Math.round(value / 1024 / 1024))}M".` });
  }
  const megabytes = megabytesOf(value);
  if (megabytes === undefined) throw new ConfigError("sandbox_invalid", `sandbox.${key} \`${value}\` is not a size`, { ...(where ? { location: where } : {}), hint: 'Write megabytes as a number, or a size such as "512M" or "2G".' });
  return megabytes;
}

/** `300`, `"300s"`, `"5m"` -> seconds. */
function parseSeconds(value: string | number, key: string, where?: SourceLocation): number {
  if (typeof value === "number" && value > 0) return value;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/i.exec(String(value));
  if (!match) throw new ConfigError("sandbox_invalid", `sandbox.${key} \`${value}\` is not a duration`, { ...(where ? { location: where } : {}), hint: 'Write seconds as a number, or a duration such as "90s" or "5m".' });
  const factor = { s: 1, m: 60, h: 3600 }[(match[2] ?? "s").toLowerCase() as "s" | "m" | "h"];
  return Number(match[1]) * factor;
}

/** The tactic's `sandbox:` block as kernel isolation options (`output_size` is read by `programOutputChars`). */
export function sandboxIsolation(config: SandboxConfig | undefined, where?: SourceLocation): Partial<IsolationOptions> {
  if (!config) return { backend: "auto" };
  const network = config.network;
  if (network !== undefined && network !== false && network !== "none") {
    throw new ConfigError("sandbox_network", "sandboxed code never gets a network: `sandbox.network` can only be false or \"none\"", { ...(where ? { location: where } : {}), hint: "Give the code a tool or a proxy for what it needs to reach; credentials then stay in the host." });
  }
  const backend = config.backend ?? "auto";
  return {
    backend,
    ...(config.memory_limit !== undefined ? { memoryMb: parseMegabytes(config.memory_limit, "memory_limit", where) } : {}),
    ...(config.cpu_time !== undefined ? { cpuSeconds: parseSeconds(config.cpu_time, "cpu_time", where) } : {}),
    ...(config.max_processes !== undefined ? { maxProcesses: Number(config.max_processes) } : {}),
    ...(config.file_size !== undefined ? { fileSizeMb: parseMegabytes(config.file_size, "file_size", where) } : {}),
    ...(config.workspace_size !== undefined ? { workspaceMb: parseMegabytes(config.workspace_size, "workspace_size", where) } : {}),
  };
}

/** How much of a program's printed output is kept (code-action, tool_chain): `sandbox.output_size`, default 1 MB. */
export function programOutputChars(config: SandboxConfig | undefined, where?: SourceLocation): number {
  return config?.output_size === undefined ? DEFAULT_OUTPUT_CHARS : Math.round(parseMegabytes(config.output_size, "output_size", where) * 1024 * 1024);
}
