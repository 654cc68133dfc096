import { copyFileSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HeldStore } from "../../src/store/HeldStore.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunSpool } from "../../src/store/RunSpool.js";
import { StoreError } from "../../src/store/StoreError.js";
import { tempDir } from "../helpers/tempTree.js";

const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");

// The store a server keeps open for its look-ups (see "look-ups in the run store" in test/serve/serveCli.test.ts):
// it reads what the spool received since (merged at each read), and opens the file again where a fresh open would
// see it otherwise.
const keep = (file: string, id: string): void => RunSpool.of(file).append({ response: { id, run: null, createdAt: Date.now(), body: JSON.stringify({ model: "m", body: { id } }), history: "[]" } }, { now: true });
const openFiles = (): number => readdirSync("/proc/self/fd").length;

describe("HeldStore", () => {
  it("reads nothing before anything is recorded, then what the spool holds, through one store; nothing once closed", () => {
    const file = path.join(tempDir(), "logs.db");
    const held = new HeldStore(file);
    try {
      expect(held.read((store) => store.getResponse("resp_1"))).toBeUndefined();
      expect(existsSync(file)).toBe(false);
      keep(file, "resp_1");
      let first: unknown;
      expect(held.read((store) => ((first = store), store.getResponse("resp_1")?.id))).toBe("resp_1");
      keep(file, "resp_2");
      expect(held.read((store) => (expect(store).toBe(first), store.getResponse("resp_2")?.id))).toBe("resp_2");
    } finally {
      held.close();
    }
    // A stopped server's handler may still be called: it opens nothing again.
    expect(held.read((store) => store.getResponse("resp_1")?.id)).toBeUndefined();
  });

  it("opens the new file when the log was moved aside (a damaged log's fix): what the spool gets goes there", () => {
    const file = path.join(tempDir(), "logs.db");
    const held = new HeldStore(file);
    try {
      keep(file, "resp_old");
      // Its spool file ended: once merged, it is deleted.
      RunSpool.of(file).close();
      expect(held.read((store) => store.getResponse("resp_old")?.id)).toBe("resp_old");
      renameSync(file, `${file}.damaged`);
      keep(file, "resp_new");
      // A connection kept on the moved file would still find the old response, and merge the new one into it.
      expect(held.read((store) => [store.getResponse("resp_old")?.id, store.getResponse("resp_new")?.id])).toEqual([undefined, "resp_new"]);
      expect(existsSync(file)).toBe(true);
    } finally {
      held.close();
    }
  });

  it("leaves the file whole while it holds it open: logs.db copied alone holds what was merged", () => {
    const file = path.join(tempDir(), "logs.db");
    const held = new HeldStore(file);
    try {
      keep(file, "resp_1");
      expect(held.read((store) => store.getResponse("resp_1")?.id)).toBe("resp_1");
      // Without a checkpoint SQLite keeps it all in logs.db-wal while a connection is open: the copy has no table.
      const copy = `${file}.copy`;
      copyFileSync(file, copy);
      const read = new Libsql(copy);
      try {
        expect(read.prepare("SELECT id FROM served_responses").raw().all()).toEqual([["resp_1"]]);
      } finally {
        read.close();
      }
    } finally {
      held.close();
    }
  });

  it("takes a log migrated by a newer lllm as read-only from the next look-up, as a fresh open does", () => {
    const file = path.join(tempDir(), "logs.db");
    const held = new HeldStore(file);
    try {
      keep(file, "resp_1");
      expect(held.read((store) => store.readOnly)).toBeUndefined();
      const newer = new Libsql(file);
      newer.pragma(`user_version = ${MIGRATIONS.length + 1}`);
      newer.close();
      expect(held.read((store) => store.readOnly)).toMatch(/written by a newer lllm/);
    } finally {
      held.close();
    }
  });

  it("does not open a damaged log again until it changes (each failed open holds its files until a collection)", () => {
    const file = path.join(tempDir(), "logs.db");
    writeFileSync(file, "not a database ".repeat(500));
    const held = new HeldStore(file);
    try {
      const before = openFiles();
      for (let attempt = 0; attempt < 50; attempt++) expect(() => held.read((store) => store.getResponse("resp_1"))).toThrow(StoreError);
      expect(openFiles() - before).toBeLessThan(10);
      // Moved aside, as the error says: a new log is made at the next look-up.
      rmSync(file);
      keep(file, "resp_1");
      expect(held.read((store) => store.getResponse("resp_1")?.id)).toBe("resp_1");
    } finally {
      held.close();
    }
  });
});
