import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { redactSecrets } from "../util/redact.js";

/**
 * The plain data of config texts parsed before, kept on disk as JSON so that a later run reads its tactic and
 * manifests without loading the yaml library (a third of a warm `lllm run`'s own start-up). Keyed by the text
 * itself (SHA-256) and this format's version: a changed file is another key, so nothing is ever stale. Only what
 * parsed without a problem is kept (errors always come from the real parser, with their positions), only data
 * that JSON holds exactly (no `.inf`/`.nan`), and never a text that contains a secret this process knows (the
 * cache must not become a second copy of a key). Off unless the CLI names a folder (`$LLLM_HOME/cache/yaml`).
 */
const FORMAT = "1";
let folder: string | undefined;

export function useParsedYamlCache(cacheFolder: string | undefined): void {
  folder = cacheFolder;
}

/** The data `text` parsed to before, or undefined. */
export function readParsedYaml(text: string): unknown {
  if (folder === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(fileFor(folder, text), "utf8")) as unknown;
  } catch {
    return undefined; // not cached (or unreadable): parse it
  }
}

/** Keep what `text` parsed to, when JSON holds it exactly; a cache that cannot be written is skipped. */
export function storeParsedYaml(text: string, data: unknown): void {
  if (folder === undefined) return;
  let exact = true;
  const json = JSON.stringify(data, (_key, value: unknown) => {
    if ((typeof value === "number" && !Number.isFinite(value)) || value === undefined || typeof value === "bigint" || value instanceof Date) exact = false;
    return value;
  });
  if (!exact || json === undefined || redactSecrets(text) !== text) return;
  try {
    const file = fileFor(folder, text);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Written whole, then renamed: a concurrent run reads the old state or the new file, never half of it.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, json, { mode: 0o600 });
    renameSync(partial, file);
  } catch {
    // No cache this time: the next run parses again.
  }
}

function fileFor(cacheFolder: string, text: string): string {
  return path.join(cacheFolder, `${createHash("sha256").update(FORMAT).update("\0").update(text).digest("hex").slice(0, 40)}.json`);
}
