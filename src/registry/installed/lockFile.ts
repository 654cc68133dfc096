import { readFileSync, statSync } from "node:fs";
import { ConfigError, type SourceLocation } from "../../errors.js";
import { jsonErrorPosition } from "../../config/jsonErrorPosition.js";
import { SourceDocument } from "../../config/SourceDocument.js";
import { isPlainObject } from "../../util/isPlainObject.js";

/** The lock's file name, beside the project's manifest. */
export const LOCK_FILE = "lllm.lock";
export const LOCKFILE_VERSION = 1;

/** Who said yes to a package's code, and how (at a terminal, or `--trust` in a script). */
export interface LockTrust {
  by: string;
  how: "terminal" | "--trust";
}

/**
 * One fetched package, under the source it was asked for by (the manifest's text; a tarball file as `file:` and a
 * path relative to the project).
 */
export interface LockEntry {
  /** The package's own name (its manifest's, else one from the source). */
  name: string;
  /** The version it resolved to: npm's version, or the manifest's. */
  version?: string;
  /** Where it was fetched from: the tarball's URL, the git URL, the OCI reference with its digest. */
  resolved?: string;
  /** git: the commit the ref resolved to. */
  commit?: string;
  /** OCI: the manifest's digest. */
  digest?: string;
  /** The archive's own integrity (npm's `dist.integrity`, or the sha512 of the tarball), checked on every fetch. */
  tarball?: string;
  /** `sha512-…` of the package's files (see filesIntegrity): what was trusted, checked before each run. */
  integrity: string;
  /** The code the package carries, one line each (`tools/fetch.ts: TypeScript tool`); empty: prompts and YAML alone. */
  code: string[];
  /** Who accepted the code (absent when it carries none). */
  trusted?: LockTrust;
  /** The sources of its own remote dependencies, keys of this lock too. */
  dependencies?: string[];
}

export interface Lock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

const STRING_KEYS = ["name", "version", "resolved", "commit", "digest", "tarball", "integrity"] as const;
const ENTRY_KEYS = [...STRING_KEYS, "code", "trusted", "dependencies"];
const INTEGRITY = /^sha512-[A-Za-z0-9+/]{86}==$/;

/** Locks read in this process, by file, with the stat that says they have not changed. */
const read = new Map<string, { key: string; lock: Lock }>();

/** An empty lock. */
export function emptyLock(): Lock {
  return { lockfileVersion: LOCKFILE_VERSION, packages: {} };
}

/**
 * Read and check `lllm.lock`. A lock that does not parse, or that was edited into something lllm did not write
 * (a missing integrity, a wrong type, an unknown key), is a ConfigError at its line, saying how to get a good one.
 */
export function readLock(file: string): Lock {
  const stat = statSync(file);
  const key = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  const cached = read.get(file);
  if (cached?.key === key) return cached.lock;
  const text = readFileSync(file, "utf8");
  const hint = "The lock is written by `lllm add`, `lllm install` and `lllm update`: undo the hand edit (git checkout lllm.lock), or delete it and run `lllm install` to lock the manifest again.";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ConfigError("lock_invalid", "lllm.lock is not valid JSON", { location: { file, ...(jsonErrorPosition(text) ?? {}) }, hint });
  }
  const problems = checkLock(data);
  if (problems.length > 0) {
    let document: SourceDocument | undefined;
    try {
      document = SourceDocument.parse(text, file);
    } catch {
      document = undefined;
    }
    const locate = (path: Array<string | number>): SourceLocation => document?.locateKey(path) ?? { file };
    throw ConfigError.fromProblems(
      "lock_invalid",
      problems.map((problem) => ({ message: `lllm.lock: ${problem.message}`, location: locate(problem.path), hint })),
    );
  }
  const lock = data as Lock;
  read.set(file, { key, lock });
  return lock;
}

/** The problems of parsed lock data, each with the path of the value at fault. */
function checkLock(data: unknown): Array<{ message: string; path: Array<string | number> }> {
  const problems: Array<{ message: string; path: Array<string | number> }> = [];
  if (!isPlainObject(data)) return [{ message: "the lock must be a JSON object", path: [] }];
  if (data.lockfileVersion !== LOCKFILE_VERSION) problems.push({ message: `\`lockfileVersion\` must be ${LOCKFILE_VERSION}`, path: ["lockfileVersion"] });
  if (!isPlainObject(data.packages)) return [...problems, { message: "`packages` must be an object of sources", path: ["packages"] }];
  for (const [source, entry] of Object.entries(data.packages)) {
    const at = ["packages", source];
    if (!isPlainObject(entry)) {
      problems.push({ message: `\`${source}\` must be an object`, path: at });
      continue;
    }
    for (const key of Object.keys(entry)) if (!ENTRY_KEYS.includes(key)) problems.push({ message: `unknown key \`${key}\` in \`${source}\``, path: [...at, key] });
    for (const key of STRING_KEYS) if (entry[key] !== undefined && typeof entry[key] !== "string") problems.push({ message: `\`${key}\` of \`${source}\` must be a string`, path: [...at, key] });
    if (typeof entry.name !== "string") problems.push({ message: `\`${source}\` has no \`name\``, path: at });
    if (typeof entry.integrity !== "string" || !INTEGRITY.test(entry.integrity)) problems.push({ message: `\`integrity\` of \`${source}\` must be a sha512 integrity (sha512-…)`, path: [...at, "integrity"] });
    if (!Array.isArray(entry.code) || !entry.code.every((line) => typeof line === "string")) problems.push({ message: `\`code\` of \`${source}\` must be a list of strings`, path: [...at, "code"] });
    if (entry.dependencies !== undefined && (!Array.isArray(entry.dependencies) || !entry.dependencies.every((item) => typeof item === "string" && isPlainObject(data.packages) && item in data.packages))) {
      problems.push({ message: `\`dependencies\` of \`${source}\` must list sources locked in this file`, path: [...at, "dependencies"] });
    }
    const trusted = entry.trusted;
    if (trusted !== undefined && !(isPlainObject(trusted) && typeof trusted.by === "string" && (trusted.how === "terminal" || trusted.how === "--trust"))) {
      problems.push({ message: `\`trusted\` of \`${source}\` must be {by, how: "terminal" | "--trust"}`, path: [...at, "trusted"] });
    }
    if (Array.isArray(entry.code) && entry.code.length > 0 && trusted === undefined) problems.push({ message: `\`${source}\` carries code but says no one trusted it`, path: [...at, "code"] });
  }
  return problems;
}
