import { existsSync, renameSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HeldStore } from "../../src/store/HeldStore.js";
import { RunSpool } from "../../src/store/RunSpool.js";
import { tempDir } from "../helpers/tempTree.js";

// The store a server keeps open for its look-ups (see test/serve/servedLookups.test.ts): it reads what the spool
// received since (merged at each read), and follows its file when that is moved aside and made anew.
const keep = (file: string, id: string): void => RunSpool.of(file).append({ response: { id, run: null, createdAt: Date.now(), body: JSON.stringify({ model: "m", body: { id } }), history: "[]" } }, { now: true });

describe("HeldStore", () => {
  it("reads nothing before anything is recorded, then what the spool holds, through one store", () => {
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
});
