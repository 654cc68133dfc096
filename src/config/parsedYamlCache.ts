import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { isPlainObject } from "../util/isPlainObject.js";
import { privateFolder } from "../util/privateFolder.js";
import { isSecretName, redactSecrets } from "../util/redact.js";
import { CONFIG_LIMITS } from "./configLimits.js";

/**
 * The plain data of config texts parsed before, kept on disk as JSON so that a later run reads its tactic and
 * manifests without loading the yaml library (a third of a warm `lllm run`'s own start-up). Keyed by the text
 * itself (SHA-256), lllm's and yaml's versions and this format's: a changed file or an upgrade is another key, so
 * nothing is ever stale. Only what parsed without a problem is kept (errors always come from the real parser, with
 * their positions), only data that JSON holds exactly (no `.inf`/`.nan`, dates or sets), and never what may hold a
 * credential: a text with a secret this process knows, or data with `headers` or `env` (MCP servers and proxies
 * take keys there) or a key named like a credential (`api_key`, `token`, …), so the cache never becomes a second
 * copy of a key (lllm's own files, the built-in proxies, are kept whatever their keys are named: `shipped`). Off
 * unless the CLI names a folder (`$LLLM_HOME/cache/yaml`) that is this user's alone.
 */
const FORMAT = "1";
let folder: string | undefined;

export function useParsedYamlCache(cacheFolder: string | undefined): void {
  folder = cacheFolder;
  checked = false;
}

let checked = false;

/** The folder once it is known to be this user's alone (checked on first use, not at start-up). */
function usableFolder(): string | undefined {
  if (!checked) {
    checked = true;
    folder = privateFolder(folder);
  }
  return folder;
}

/** The data `text` parsed to before, or undefined. */
export function readParsedYaml(text: string): unknown {
  const cacheFolder = usableFolder();
  if (cacheFolder === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(fileFor(cacheFolder, text), "utf8")) as unknown;
  } catch {
    return undefined; // not cached (or unreadable): parse it
  }
}

/**
 * Keep what `text` parsed to, when JSON holds it exactly; a cache that cannot be written is skipped. `shipped`: a
 * file of lllm's own (a built-in proxy), which holds no user's credential: its keys named like one
 * (`api_key_env: FRED_API_KEY`, a variable's name) do not keep it out, and it is read from the cache like any other.
 */
export function storeParsedYaml(text: string, data: unknown, options: { shipped?: boolean } = {}): void {
  const cacheFolder = usableFolder();
  if (cacheFolder === undefined || !keepable(data, options.shipped === true) || redactSecrets(text) !== text) return;
  try {
    const json = JSON.stringify(data);
    const file = fileFor(cacheFolder, text);
    // Written whole, then renamed: a concurrent run reads the old state or the new file, never half of it.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, json, { mode: 0o600 });
    renameSync(partial, file);
  } catch {
    // No cache this time: the next run parses again.
  }
}

/** Whether JSON holds `data` exactly and (unless `shipped`) nothing in it may be a credential (see above). */
function keepable(data: unknown, shipped: boolean): boolean {
  const stack: unknown[] = [data];
  // Data that contains itself (an alias inside its anchor's value) is refused by the parser; should any reach here,
  // the walk still ends: a file holds fewer values than bytes, plus what its aliases repeat.
  let budget = CONFIG_LIMITS.maxBytes + CONFIG_LIMITS.maxAliasedValues;
  while (stack.length > 0) {
    if (--budget < 0) return false;
    const value = stack.pop();
    if (value === null || typeof value === "string" || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return false;
      continue;
    }
    if (Array.isArray(value)) for (const item of value as unknown[]) stack.push(item); // not push(...): a long list overflows the stack
    else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (!shipped && (key === "headers" || key === "env") && isPlainObject(item) && Object.keys(item).length > 0) return false;
        if (!shipped && isSecretName(key.replace(/-/g, "_")) && item !== null && item !== "") return false;
        stack.push(item);
      }
    } else return false; // a date, a set, a map, undefined: JSON would not give it back as it is
  }
  return true;
}

let versions: string | undefined;

function fileFor(cacheFolder: string, text: string): string {
  versions ??= JSON.stringify([FORMAT, packageVersion(new URL("../../package.json", import.meta.url)), packageVersion(createRequire(import.meta.url).resolve("yaml/package.json"))]);
  return path.join(cacheFolder, `${createHash("sha256").update(versions).update("\0").update(text).digest("hex").slice(0, 40)}.json`);
}

function packageVersion(file: string | URL): string {
  try {
    return String((JSON.parse(readFileSync(file, "utf8")) as { version?: unknown }).version);
  } catch {
    return "unknown";
  }
}
