import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { inPrivateTmpfs } from "../helpers/privateTmpfs.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { echoSetup, parseLines, removeTempDirs } from "./batchTestHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

describe("lllm batch --out on a full disk", () => {
  it("stops with a clear error (exit 1, the file, the disk is full, the same command resumes), leaves no torn line, and resumes", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    // Each result line is about 3 KB: a 64 KB disk fills up around the 20th, most likely in the middle of a line.
    // The first line is not JSON: its item fails, so that --retry-failed has a line to drop.
    writeFileSync(inputs, ["{not json", ...Array.from({ length: 60 }, (_, index) => JSON.stringify({ id: `q${index + 1}`, input: `${index + 1} `.repeat(1000) }))].join("\n"));
    const disk = path.join(setup.dir, "disk");
    mkdirSync(disk);
    const out = path.join(disk, "out.jsonl");
    const report = path.join(setup.dir, "report");
    mkdirSync(report);
    const command = `"${process.execPath}" "${BIN}" batch "${setup.tactic}" --inputs "${inputs}" --out "${out}" --concurrency 4 --no-log`;
    // Both runs in the one namespace: the first on a full disk, the second once it has room; the file is copied
    // out after each (the tmpfs is gone with the script).
    const result = await inPrivateTmpfs({
      mountPoint: disk,
      size: "64k",
      cwd: ROOT,
      env: { ...setup.env, NO_COLOR: "1" },
      script: [
        `${command} 2>"${report}/first.err"; echo $? >"${report}/first.code"`,
        `cp "${out}" "${report}/first.jsonl"`,
        // --retry-failed rewrites the file without its failed line: no room for the new copy either.
        `${command} --retry-failed 2>"${report}/retry.err"; echo $? >"${report}/retry.code"`,
        `cp "${out}" "${report}/retry.jsonl"; ls -A "$MOUNT" >"${report}/retry.ls"`,
        `mount -o remount,size=4m "$MOUNT"`,
        `${command} 2>"${report}/second.err"; echo $? >"${report}/second.code"`,
        `cp "${out}" "${report}/second.jsonl"`,
      ].join("\n"),
    });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const read = (name: string): string => readFileSync(path.join(report, name), "utf8");

    const firstErr = read("first.err");
    expect(read("first.code").trim()).toBe("1");
    expect(firstErr).toContain(`lllm: error: cannot write the results to ${out}: the disk is full (ENOSPC)`);
    expect(firstErr).toMatch(/The \d+ results already in it are whole and kept: free some space, then run the same command again: it skips the items already in/);
    expect(firstErr).not.toContain("internal error");
    const first = read("first.jsonl");
    // Whole lines only: the line the disk cut short was cut off again.
    expect(first.endsWith("\n")).toBe(true);
    const firstLines = parseLines(first);
    expect(firstLines.length).toBeGreaterThan(5);
    expect(firstLines.length).toBeLessThan(61);
    expect(firstLines.filter((line) => line.status === "error").map((line) => line.id)).toEqual(["1"]);

    expect(read("retry.code").trim()).toBe("1");
    expect(read("retry.err")).toContain(`lllm: error: cannot write the results to ${out}: the disk is full (ENOSPC)`);
    expect(read("retry.err")).toContain("--retry-failed could not rewrite it; it is unchanged: free some space, then run the same command again");
    expect(read("retry.jsonl")).toBe(first);
    expect(read("retry.ls").trim()).toBe("out.jsonl"); // no half-written copy left beside it

    expect(read("second.code").trim()).toBe("1"); // the item of the bad line is still failed (not retried)
    expect(read("second.err")).toContain(`${61 - firstLines.length} ok, 0 failed, ${firstLines.length} skipped`);
    const second = parseLines(read("second.jsonl"));
    expect(second.map((line) => line.id).sort()).toEqual(["1", ...Array.from({ length: 60 }, (_, index) => `q${index + 1}`)].sort());
    expect(second.filter((line) => line.status === "ok")).toHaveLength(60);
  }, 180_000);
});
