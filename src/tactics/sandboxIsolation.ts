import type { IsolationOrigin } from "../codeaction/requireIsolation.js";
import type { LoadedTactic, SandboxConfig } from "../config/index.js";
import { collectProblems, ConfigError, type ConfigProblem, type SourceLocation } from "../errors.js";
import type { IsolationOptions } from "../sandbox/index.js";
import { megabytesOf } from "../util/megabytesOf.js";
import type { Registry } from "../registry/index.js";
import { realOrResolved } from "../util/realPath.js";

/** Where a key of the `sandbox:` block is written, for errors. */
export type SandboxLocator = (key: string) => SourceLocation | undefined;

/** The locator of a tactic's `sandbox:` keys: the key's own line, else the block's. */
export function sandboxLocator(tactic: Pick<LoadedTactic, "locate">): SandboxLocator {
  return (key) => tactic.locate(["sandbox", key]) ?? tactic.locate(["sandbox"]);
}

/** Past this (about 31 years) a CPU time is no limit, and it would overflow the kernel's integer. */
const MAX_SECONDS = 1e9;

/** A program's printed answer is kept up to this size unless `sandbox.output_size` says otherwise (1 MB). */
const DEFAULT_OUTPUT_CHARS = 1024 * 1024;

/**
 * `512`, `"512M"`, `"1G"`, `"64K"`, `"1.5g"` -> megabytes. A bare number is megabytes, as the schema says, and a
 * byte count mistaken for megabytes would lift the limit: refused.
 */
function parseMegabytes(value: string | number, key: string, locate?: SandboxLocator): number {
  const where = locate?.(key);
  // A bare number, written as a number or as a string without a unit, is megabytes.
  if ((typeof value === "number" || /^\s*\d+(?:\.\d+)?\s*$/.test(value)) && Number(value) > 1024 * 1024) {
    throw new ConfigError("sandbox_invalid", `sandbox.${key} ${value} would be ${value} megabytes: a bare number is megabytes`, { ...(where ? { location: where } : {}), hint: `Write a size with its unit, e.g. "${Math.max(1, Math.round(Number(value) / 1024 / 1024))}M".` });
  }
  const megabytes = megabytesOf(value);
  if (megabytes === undefined) throw new ConfigError("sandbox_invalid", `sandbox.${key} \`${value}\` is not a size (above 0, at most 1 PiB)`, { ...(where ? { location: where } : {}), hint: 'Write megabytes as a number, or a size such as "512M" or "2G".' });
  return megabytes;
}

/**
 * `300`, `"300s"`, `"5m"` -> whole seconds, rounded up (an rlimit counts whole seconds). Zero is refused: the kernel
 * would take it for no limit at all.
 */
function parseSeconds(value: string | number, key: string, locate?: SandboxLocator): number {
  const where = locate?.(key);
  const match = typeof value === "number" ? undefined : /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/i.exec(value);
  const factor = match ? { s: 1, m: 60, h: 3600 }[(match[2] ?? "s").toLowerCase() as "s" | "m" | "h"] : 1;
  const seconds = typeof value === "number" ? value : match ? Number(match[1]) * factor : Number.NaN;
  if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= MAX_SECONDS)) throw new ConfigError("sandbox_invalid", `sandbox.${key} \`${value}\` is not a duration above 0 (and at most ${MAX_SECONDS} s)`, { ...(where ? { location: where } : {}), hint: 'Write seconds as a number, or a duration such as "90s" or "5m".' });
  return Math.ceil(seconds);
}

/** `64` or `"64"` -> 64. Anything else is refused: `Number("abc")` would reach the kernel as no limit. */
function parseCount(value: string | number, key: string, locate?: SandboxLocator): number {
  const where = locate?.(key);
  const count = typeof value === "number" ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(Number.isSafeInteger(count) && count >= 1 && count <= 1e9)) throw new ConfigError("sandbox_invalid", `sandbox.${key} \`${value}\` is not a whole number above 0`, { ...(where ? { location: where } : {}), hint: "Write a count such as 64." });
  return count;
}

/** The tactic's `sandbox:` block as kernel isolation options (`output_size` is read by `programOutputChars`). */
export function sandboxIsolation(config: SandboxConfig | undefined, locate?: SandboxLocator): Partial<IsolationOptions> {
  if (!config) return { backend: "auto" };
  const network = config.network;
  if (network !== undefined && network !== false && network !== "none") {
    const where = locate?.("network");
    throw new ConfigError("sandbox_network", "sandboxed code never gets a network: `sandbox.network` can only be false or \"none\"", { ...(where ? { location: where } : {}), hint: "Give the code a tool or a proxy for what it needs to reach; credentials then stay in the host." });
  }
  const backend = config.backend ?? "auto";
  return {
    backend,
    ...(config.memory_limit !== undefined ? { memoryMb: parseMegabytes(config.memory_limit, "memory_limit", locate) } : {}),
    ...(config.cpu_time !== undefined ? { cpuSeconds: parseSeconds(config.cpu_time, "cpu_time", locate) } : {}),
    ...(config.max_processes !== undefined ? { maxProcesses: parseCount(config.max_processes, "max_processes", locate) } : {}),
    ...(config.file_size !== undefined ? { fileSizeMb: parseMegabytes(config.file_size, "file_size", locate) } : {}),
    ...(config.workspace_size !== undefined ? { workspaceMb: parseMegabytes(config.workspace_size, "workspace_size", locate) } : {}),
  };
}

/** How much of a program's printed output is kept (code-action, tool_chain): `sandbox.output_size`, default 1 MB. */
export function programOutputChars(config: SandboxConfig | undefined, locate?: SandboxLocator): number {
  return config?.output_size === undefined ? DEFAULT_OUTPUT_CHARS : Math.round(parseMegabytes(config.output_size, "output_size", locate) * 1024 * 1024);
}

/** Every problem of a tactic's `sandbox:` block, each key read on its own so that all are told at once. */
export function sandboxProblems(tactic: Pick<LoadedTactic, "config" | "locate">): ConfigProblem[] {
  const { sandbox } = tactic.config;
  const problems: ConfigProblem[] = [];
  const locate = sandboxLocator(tactic);
  for (const [key, value] of Object.entries(sandbox ?? {})) {
    collectProblems(problems, () => (key === "output_size" ? programOutputChars({ output_size: value as string | number }, locate) : sandboxIsolation({ [key]: value }, locate)));
  }
  return problems;
}

/**
 * Where a tactic's `sandbox:` is chosen, for the advice of a sandbox that cannot run: the tactic's own file, unless
 * that file is in a package installed from a remote source, whose cached files cannot be edited (its ref is then
 * given, for a tactic of your own with `base:`).
 */
export function isolationOrigin(prepared: { tactic: Pick<LoadedTactic, "file">; registry: Registry }): IsolationOrigin {
  const { file } = prepared.tactic;
  const pkg = prepared.registry.packageOfFile(file);
  if (pkg === undefined || !prepared.registry.isInstalled(pkg)) return {};
  const real = realOrResolved(file);
  const entry = [...pkg.tactics.values()].find((candidate) => candidate.file === file || realOrResolved(candidate.file) === real);
  return entry === undefined ? {} : { installedTactic: entry.ref };
}
