import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type Libsql from "libsql";
import { MIGRATIONS } from "./migrations.js";

export type Database = Libsql.Database;

/** Parallel runs wait this long for another's write instead of failing with "database is locked". */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Open (or create) the store's SQLite file and bring its schema up to date. libsql is imported here, on demand,
 * so that commands that do not log never load its native module.
 */
export async function openDatabase(file: string): Promise<Database> {
  return openDatabaseSync(file);
}

/** `openDatabase`, synchronously (libsql itself is synchronous). */
export function openDatabaseSync(file: string): Database {
  // CommonJS, so `require`: `import()` would scan it for export names first (Node's CommonJS lexer).
  const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");
  mkdirSync(path.dirname(file), { recursive: true });
  const database = new Libsql(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    database.pragma("journal_mode = WAL");
    // WAL with synchronous=NORMAL: a commit is not fsynced (a power cut may lose the last runs, never corrupt).
    database.pragma("synchronous = NORMAL");
    migrate(database);
  } catch (error) {
    database.close();
    throw error;
  }
  return database;
}

function userVersion(database: Database): number {
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
    if (current > MIGRATIONS.length) throw new Error(`the store's schema is version ${current}, newer than this lllm knows (${MIGRATIONS.length}); upgrade lllm`);
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
