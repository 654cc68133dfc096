import { accessSync, closeSync, constants, existsSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type Libsql from "libsql";
import { MIGRATIONS } from "./migrations.js";
import { StoreError } from "./StoreError.js";
import { privateStoreFile } from "./storeFiles.js";
import { distrustFile } from "../config/distrust.js";
import { makePrivateFolder } from "../util/privateFolder.js";

export type Database = Libsql.Database;

/** An open store database, and whether lllm may write to it. */
export interface OpenedDatabase {
  database: Database;
  /** Why nothing may be written (the file is read-only to this user, or its schema is newer than this lllm's); undefined when lllm may write. */
  readOnly: string | undefined;
  /**
   * There is no file, and none can be made (a home this user may only read): `database` is an empty store in
   * memory, into which a reader may merge the spool's runs (keeping its files).
   */
  inMemory?: true;
}

/** Parallel writers wait this long for another's write instead of failing with "database is locked". */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Open (or create) the store's SQLite file and bring its schema up to date. A new file is made 0600 in a 0700
 * folder (SQLite gives its `-wal` and `-shm` the database's mode), an existing one of ours that others can read is
 * tightened. A file this user cannot write, or another user's (see `distrustFile`), is opened read-only (none at
 * all: an empty one in memory), and one whose schema is newer than this lllm's is not written to (`readOnly` says
 * why): its runs are still read. A damaged file is a `StoreError` that says how to
 * recover. libsql is loaded here, on demand: only commands that read the log load its native module.
 */
export function openDatabaseSync(file: string): OpenedDatabase {
  const Database = loadLibsql();
  if (existsSync(file)) privateStoreFile(file, ["-wal", "-shm"]);
  // Another user's log is read, never written: this user's runs must not go into a file someone else reads.
  const distrust = distrustFile(file);
  if (distrust !== undefined) return { database: openReadOnly(Database, file), readOnly: `${file} is not yours (${distrust})` };
  if (!writable(file)) {
    if (existsSync(file)) return { database: openReadOnly(Database, file), readOnly: `${file} is read-only to you` };
    return { database: openInMemory(Database), readOnly: `${path.dirname(file)} is read-only to you`, inMemory: true };
  }
  try {
    return openWritable(Database, file);
  } catch (error) {
    if (isDamage(error)) throw damaged(file, error);
    if (!isDenied(error)) throw unreadable(file, error);
    return { database: openReadOnly(Database, file), readOnly: `${file} is read-only to you` };
  }
}

/** libsql, once loaded. */
let libsql: typeof Libsql | undefined;

/**
 * libsql, by `require`: CommonJS, and `import()` would scan it for export names first (Node's CommonJS lexer). Its
 * loader asks `process.report.getReport()` whether the C library is glibc, to pick its native binary: a whole
 * diagnostic report, 6-9 ms of CPU on every command that opens the log. While it loads, that question is answered
 * from detect-libc (libsql's own dependency, which reads the ELF interpreter of Node's binary instead).
 */
function loadLibsql(): typeof Libsql {
  if (libsql) return libsql;
  const require = createRequire(import.meta.url);
  const report = process.platform === "linux" ? process.report : undefined;
  const getReport = report?.getReport;
  if (report && getReport) {
    const { familySync, GLIBC } = createRequire(require.resolve("libsql"))("detect-libc") as { familySync(): string | null; GLIBC: string };
    const glibc = familySync() === GLIBC;
    // Only what the loader reads (`header.glibcVersionRuntime`, present on glibc); a report of an error is the real one.
    report.getReport = ((error?: Error) => (error === undefined ? { header: glibc ? { glibcVersionRuntime: "glibc" } : {} } : getReport.call(report, error))) as typeof getReport;
  }
  try {
    return (libsql = require("libsql") as typeof Libsql);
  } finally {
    if (report && getReport) report.getReport = getReport;
  }
}

function openWritable(Database: typeof Libsql, file: string): OpenedDatabase {
  makePrivateFolder(path.dirname(file));
  if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
  const database = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const version = userVersion(database);
    if (version > MIGRATIONS.length) {
      return { database, readOnly: `${file} was written by a newer lllm (its schema is version ${version}, this lllm knows ${MIGRATIONS.length})` };
    }
    database.pragma("journal_mode = WAL");
    // WAL with synchronous=NORMAL: a commit is not fsynced (a power cut may lose the last merge, never corrupt).
    database.pragma("synchronous = NORMAL");
    migrate(database);
  } catch (error) {
    database.close();
    throw error;
  }
  return { database, readOnly: undefined };
}

/**
 * Read-only, as a `mode=ro` URI. A database in WAL mode needs its `-shm`: in a folder this user cannot write, where
 * SQLite cannot make one, it is opened `immutable` instead (no locks; a one-off read of what is on disk).
 */
function openReadOnly(Database: typeof Libsql, file: string): Database {
  let lastError: unknown;
  for (const query of ["mode=ro", "mode=ro&immutable=1"]) {
    let database: Database | undefined;
    try {
      database = new Database(`${pathToFileURL(file).href}?${query}`, { timeout: BUSY_TIMEOUT_MS });
      userVersion(database);
      return database;
    } catch (error) {
      database?.close();
      if (isDamage(error)) throw damaged(file, error);
      lastError = error;
    }
  }
  throw unreadable(file, lastError);
}

/** An empty store in memory, with the current schema: what a reader sees of a log that does not exist. */
function openInMemory(Database: typeof Libsql): Database {
  const database = new Database(":memory:");
  migrate(database);
  return database;
}

function writable(file: string): boolean {
  try {
    accessSync(path.dirname(file), constants.W_OK);
    if (existsSync(file)) accessSync(file, constants.W_OK);
    return true;
  } catch (error) {
    // A missing folder is made when the file is created; anything else means this user cannot write here.
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** The schema version a database file holds (`PRAGMA user_version`). */
export function userVersion(database: Database): number {
  // libsql's pluck()/pragma({simple}) return the whole row: raw() gives the values.
  const row = database.prepare("PRAGMA user_version").raw().get() as unknown[] | undefined;
  return Number(row?.[0] ?? 0);
}

/** Apply the migrations this database lacks, each with its version bump in one transaction. */
function migrate(database: Database): void {
  if (userVersion(database) >= MIGRATIONS.length) return;
  // IMMEDIATE: two processes opening a new store at once must not both run migration 1.
  database.exec("BEGIN IMMEDIATE");
  try {
    const current = userVersion(database);
    for (let version = current; version < MIGRATIONS.length; version += 1) {
      database.exec(MIGRATIONS[version]!);
      database.pragma(`user_version = ${version + 1}`);
    }
    database.exec("COMMIT");
  } catch (error) {
    database.exec("ROLLBACK");
    throw error;
  }
}

/** SQLite's codes for a file whose pages do not hold a valid database (extended codes share the prefix). */
export function isDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB"));
}

/** This user may not write the file or its folder (or the file system is read-only). */
export function isDenied(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_PERM") || ["EACCES", "EPERM", "EROFS"].includes(code));
}

/** The store is damaged: say which file, and how to go on without losing the runs recorded since. */
export function damaged(file: string, error: unknown): StoreError {
  const aside = `${file}.damaged`;
  return new StoreError("store_damaged", `the run log ${file} is damaged: ${(error as Error).message}`, {
    location: { file },
    hint: `Move it aside (mv ${file} ${aside}): lllm starts a new log there, and the runs recorded meanwhile (kept in ${path.basename(file, ".db")}.spool/) go into it. To save what the old file still holds: sqlite3 ${aside} .recover | sqlite3 ${file}.recovered`,
    cause: error,
  });
}

function unreadable(file: string, error: unknown): StoreError {
  return new StoreError("store_unreadable", `the run log ${file} cannot be read: ${(error as Error | undefined)?.message ?? String(error)}`, {
    location: { file },
    hint: "Check that it is a file you may read; or move it aside, and lllm starts a new log there.",
    cause: error,
  });
}
