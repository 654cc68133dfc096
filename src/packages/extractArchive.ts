import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ReadEntry } from "tar";
import { ConfigError } from "../errors.js";
import { formatBytes, PACKAGE_LIMITS } from "./limits.js";

/** A file read out of an archive, checked, not yet written. */
interface ArchiveFile {
  path: string;
  data: Buffer;
  executable: boolean;
}

export interface ExtractOptions {
  /** What the archive is, for messages (`npm:weather@1.2.0`, a file name). */
  label: string;
  /**
   * Take the files under the archive's one top folder (npm's `package/`, GitHub's `repo-<sha>/`) as the package's.
   * Default true: done when every entry is under one folder.
   */
  stripTopFolder?: boolean;
}

/**
 * Unpack a tar archive (gzipped or not) into `target`, an empty folder, with lllm's rules for packages: plain files
 * and folders only (a link, to anywhere, is refused), no absolute path and no `..`, at most
 * `PACKAGE_LIMITS.unpackedBytes` and `PACKAGE_LIMITS.entries`. Every entry is checked before the first file is
 * written, so a refused archive writes nothing. Throws a ConfigError that names the entry at fault.
 */
export async function extractArchive(archive: Buffer, target: string, options: ExtractOptions): Promise<{ files: number; bytes: number }> {
  const { Parser } = await import("tar");
  const files: ArchiveFile[] = [];
  const folders: string[] = [];
  let bytes = 0;
  let entries = 0;
  const refuse = (what: string, hint: string): ConfigError => new ConfigError("package_archive_invalid", `${options.label}: ${what}`, { hint });
  let failure: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        if (failure !== undefined) return entry.resume();
        try {
          const name = checkPath(entry.path, refuse);
          entries += 1;
          if (entries > PACKAGE_LIMITS.entries) throw refuse(`the archive holds more than ${PACKAGE_LIMITS.entries} entries`, "A package is a folder of prompts, tactics and tools: keep data sets out of it.");
          if (entry.type === "Directory") {
            if (name !== "") folders.push(name);
            return entry.resume();
          }
          if (entry.type === "SymbolicLink" || entry.type === "Link") {
            throw refuse(`\`${entry.path}\` is a ${entry.type === "Link" ? "hard" : "symbolic"} link (to \`${entry.linkpath ?? "?"}\`): packages may hold plain files only`, "Links could point outside the package; copy the file into the package instead.");
          }
          if (entry.type !== "File" && entry.type !== "OldFile" && entry.type !== "ContiguousFile") {
            throw refuse(`\`${entry.path}\` is a ${entry.type} entry: packages may hold plain files and folders only`, "Make the archive of the package's folder with `lllm pack`.");
          }
          bytes += entry.size;
          if (bytes > PACKAGE_LIMITS.unpackedBytes) {
            throw new ConfigError("package_too_large", `${options.label}: the package unpacks to more than ${formatBytes(PACKAGE_LIMITS.unpackedBytes)} (at \`${entry.path}\`)`, { hint: "A package is prompts, tactics and tools: keep large data out of it, and fetch it at run time from a proxy or a URL." });
          }
          const chunks: Buffer[] = [];
          entry.on("data", (chunk: Buffer) => chunks.push(chunk));
          entry.on("end", () => files.push({ path: name, data: Buffer.concat(chunks), executable: ((entry.mode ?? 0) & 0o111) !== 0 }));
        } catch (error) {
          failure = error instanceof Error ? error : new Error(String(error));
          entry.resume();
          parser.abort(failure);
        }
      },
    });
    parser.on("error", (error: Error) => reject(failure ?? error));
    parser.on("abort", () => reject(failure));
    parser.on("end", () => (failure ? reject(failure) : resolve()));
    parser.end(archive);
  }).catch((error: unknown) => {
    if (error instanceof ConfigError) throw error;
    throw refuse(`not a readable tar archive (${error instanceof Error ? error.message : String(error)})`, "A package archive is a .tgz (tar + gzip) of the package's folder, as `lllm pack` makes.");
  });
  if (files.length === 0) throw refuse("the archive holds no files", "Make the archive of the package's folder with `lllm pack`.");
  const strip = options.stripTopFolder !== false ? commonTopFolder(files.map((file) => file.path)) : undefined;
  const relative = (name: string): string => (strip === undefined ? name : name.slice(strip.length + 1));
  const seen = new Set<string>();
  for (const file of files) {
    const name = relative(file.path);
    if (seen.has(name)) throw refuse(`\`${file.path}\` is in the archive twice`, "Make the archive again, with each file once.");
    seen.add(name);
  }
  for (const folder of folders) {
    // Empty folders outside the stripped top one (or the top one itself) are left out.
    if (strip !== undefined && !folder.startsWith(`${strip}/`)) continue;
    mkdirSync(path.join(target, ...relative(folder).split("/")), { recursive: true });
  }
  for (const file of files) {
    const destination = path.join(target, ...relative(file.path).split("/"));
    try {
      mkdirSync(path.dirname(destination), { recursive: true });
      writeFileSync(destination, file.data, { flag: "wx" });
      chmodSync(destination, file.executable ? 0o755 : 0o644);
    } catch (error) {
      // A file where a folder must be (`a` and `a/b`), or a name the file system refuses.
      throw refuse(`\`${file.path}\` cannot be unpacked (${(error as NodeJS.ErrnoException).code ?? String(error)})`, "Make the archive of the package's folder with `lllm pack`.");
    }
  }
  return { files: files.length, bytes };
}

/** An entry's path, `/`-separated without `./` or a trailing `/`; refused when absolute or when it climbs out. */
function checkPath(raw: string, refuse: (what: string, hint: string) => ConfigError): string {
  const hint = "Paths in a package archive are relative and stay inside it; make the archive with `lllm pack`.";
  if (raw.includes("\0")) throw refuse("an entry's path holds a NUL byte", hint);
  const unified = raw.replace(/\\/g, "/");
  if (unified.startsWith("/") || /^[A-Za-z]:/.test(unified)) throw refuse(`\`${raw}\` is an absolute path`, hint);
  const parts = unified.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw refuse(`\`${raw}\` climbs out of the package (\`..\`)`, hint);
  return parts.join("/");
}

/** The one folder every file is under (npm's `package/`), when there is one. */
function commonTopFolder(filePaths: string[]): string | undefined {
  const top = filePaths[0]!.split("/")[0]!;
  return filePaths.every((name) => name.startsWith(`${top}/`)) ? top : undefined;
}
