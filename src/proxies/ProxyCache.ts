import { createHash, randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { canonicalJson } from "../util/canonicalJson.js";
import { privateFolder } from "../util/privateFolder.js";
import { secrets } from "../util/redact.js";

/** What identifies a cached response: never the API key, which travels in headers or in the request's `query`. */
export interface CacheKeyParts {
  method: string;
  url: string;
  params: Record<string, unknown>;
}

/** Hits and misses since the cache was made, for tests and `--verbose` output. */
export interface CacheStats {
  hits: number;
  misses: number;
}

/**
 * Proxy responses on disk, one JSON file per request under `<dir>/<proxy>/<sha256>.json` (by default
 * `$LLLM_HOME/cache/proxies`). Entries are written to a temporary file in the same folder and renamed into place,
 * so a concurrent run sees a whole entry or none. Entries never expire: delete the folder to refresh them. A broken
 * entry counts as a miss, and a failed write never fails the call (the cache only saves requests).
 *
 * An entry is an answer lllm trusts as the API's, so the cache folder and each proxy's folder are used only when
 * they are this user's alone (see privateFolder: not a link, not another user's, writable by no one else; made
 * 0700), and entries are written 0600. Otherwise the cache is off for that proxy: every call goes to the API.
 */
export class ProxyCache {
  private readonly counts: CacheStats = { hits: 0, misses: 0 };
  /** Each proxy's folder once checked: the folder, or undefined when it is not safe to use. */
  private readonly folders = new Map<string, string | undefined>();

  constructor(readonly dir: string) {}

  /** sha256 of the method, the URL and the params with their keys sorted, so `{a, b}` and `{b, a}` are one entry. */
  static keyOf(parts: CacheKeyParts): string {
    return createHash("sha256").update(canonicalJson([parts.method, parts.url, parts.params])).digest("hex");
  }

  stats(): CacheStats {
    return { ...this.counts };
  }

  /** The cached response, wrapped so that a cached `null` is still a hit. */
  async get(proxy: string, key: string): Promise<{ value: unknown } | undefined> {
    const file = this.file(proxy, key);
    try {
      if (file === undefined) throw new Error("no private cache folder");
      const entry = JSON.parse(await readFile(file, "utf8")) as { value?: unknown };
      if (entry !== null && typeof entry === "object" && "value" in entry) {
        this.counts.hits++;
        return { value: entry.value };
      }
    } catch {
      // Missing or unreadable: a miss.
    }
    this.counts.misses++;
    return undefined;
  }

  async set(proxy: string, key: string, entry: CacheKeyParts & { value: unknown }): Promise<void> {
    const file = this.file(proxy, key);
    if (file === undefined) return;
    const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      // A class proxy may have put the key into the URL or the params: no key is ever written to disk, in any form.
      const stored = secrets.redactValue({ method: entry.method, url: entry.url, params: entry.params, savedAt: new Date().toISOString(), value: entry.value });
      await writeFile(temporary, JSON.stringify(stored), { mode: 0o600 });
      await rename(temporary, file);
    } catch {
      await rm(temporary, { force: true }).catch(() => undefined);
    }
  }

  /** The entry's file, or undefined when the proxy's folder is not this user's alone. */
  private file(proxy: string, key: string): string | undefined {
    let folder = this.folders.get(proxy);
    if (!this.folders.has(proxy)) {
      folder = privateFolder(this.dir) === undefined ? undefined : privateFolder(path.join(this.dir, proxy));
      this.folders.set(proxy, folder);
    }
    return folder === undefined ? undefined : path.join(folder, `${key}.json`);
  }
}
