import { createHash } from "node:crypto";
import path from "node:path";
import type { Registry } from "../../registry/index.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import { canonicalJson } from "../../util/canonicalJson.js";
import { realOrResolved } from "../../util/realPath.js";

/**
 * The digest a producer and its workers compare: the tactic's resolved configuration, its agents (with their system
 * prompts) and the names of its packages. Unlike the run log's `configDigest`, it holds no folder: the same tactic
 * and packages in another folder, or on another machine, give the same digest.
 */
export function queueDigest(prepared: PreparedTactic): string {
  const { packages: _folders, ...config } = prepared.tactic.config;
  const resolved = {
    tactic: config,
    packages: packageNames(prepared.registry, prepared.tactic.packages),
    agents: prepared.agents.map((agent) => ({ name: agent.name, config: agent.config, system: agent.systemPrompt.text })),
  };
  return createHash("sha256").update(canonicalJson(resolved)).digest("hex").slice(0, 16);
}

/** The names of the packages in these folders (a folder no package was loaded from keeps its base name). */
export function packageNames(registry: Registry, folders: readonly string[]): string[] {
  return folders.map((folder) => registry.list().find((pkg) => sameFolder(pkg.dir, folder))?.name ?? path.basename(folder));
}

function sameFolder(a: string, b: string): boolean {
  return realOrResolved(a) === realOrResolved(b);
}

/** The digest of a file's bytes: a worker compares it with its own copy before loading anything. */
export function contentDigest(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
