import type { LockEntry } from "../../registry/installed/lockFile.js";
import type { NpmSettings } from "./npmConfig.js";

/** A package archive fetched from its source, and what the lock records of where it came from. */
export interface Fetched {
  /** A tar archive (gzipped or not) of the package. */
  archive: Buffer;
  /** Whether the archive's one top folder is the package (npm's `package/`). */
  stripTopFolder: boolean;
  /** The lock's fields for it: version, resolved, commit, digest, tarball. */
  fields: Pick<LockEntry, "version" | "resolved" | "commit" | "digest" | "tarball">;
  /** The name the package goes by when its manifest gives none. */
  defaultName: string;
}

/** What fetching needs: npm's settings (loaded on first use), the working folder for git. */
export interface FetchContext {
  npmSettings(): Promise<NpmSettings>;
  /** A temporary folder for clones, made on first use and removed when the installer closes. */
  scratch(): string;
}

/** A package name from a source's last word: letters, digits, `_` and `-`. */
export function nameFrom(text: string): string {
  const name = text.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^[-\d]+/, "");
  return name === "" ? "package" : name;
}
