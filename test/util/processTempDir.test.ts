import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { endedPid } from "../helpers/endedPid.js";
import { processTempDir } from "../../src/util/processTempDir.js";

describe("processTempDir", () => {
  it("names its folder after this process, and first removes the folders of its prefix left by processes that are gone", async () => {
    const prefix = "lllm-sweep-test-";
    const dead = path.join(tmpdir(), `${prefix}${await endedPid()}-abc123`);
    const living = path.join(tmpdir(), `${prefix}${process.ppid}-def456`);
    const other = path.join(tmpdir(), `lllm-other-${await endedPid()}-ghi789`);
    for (const folder of [dead, living, other]) {
      mkdirSync(path.join(folder, "inner"), { recursive: true });
      writeFileSync(path.join(folder, "inner", "requests.jsonl"), "{}\n");
    }
    const made = processTempDir(prefix);
    try {
      expect(path.basename(made)).toMatch(new RegExp(`^${prefix}${process.pid}-\\w{6}$`));
      expect(statSync(made).mode & 0o777).toBe(0o700);
      expect(existsSync(dead)).toBe(false);
      // A process still running keeps its folder; another prefix is not looked at.
      expect(existsSync(living)).toBe(true);
      expect(existsSync(other)).toBe(true);
      // The sweep runs once per prefix: a folder orphaned later is left to the next process.
      mkdirSync(dead);
      rmSync(processTempDir(prefix), { recursive: true });
      expect(existsSync(dead)).toBe(true);
    } finally {
      for (const folder of [made, dead, living, other]) rmSync(folder, { recursive: true, force: true });
    }
  });
});
