import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/codeaction/ArtifactStore.js";
import { RunStore } from "../../src/store/RunStore.js";
import { BIN, ROOT, type CliResult } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";

afterEach(() => removeTempDirs());

const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");

/** The CLI under umask 022, as most shells run it: what lllm does not make private, others can read. */
function lllm(home: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", 'umask 022 && exec "$0" "$@"', process.execPath, BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8);
const run = (home: string) => lllm(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris?", "--no-stream"]);

describe("the run store is readable by its user alone", { timeout: 180_000 }, () => {
  it("a new LLLM_HOME is made 0700; the spool, logs.db and its WAL and SHM 0600", async () => {
    const home = path.join(tempDir(), "home");
    expect(await run(home)).toMatchObject({ code: 0 });
    expect(mode(home)).toBe("700");
    const spool = path.join(home, "logs.spool");
    expect(mode(spool)).toBe("700");
    const spooled = readdirSync(spool);
    expect(spooled).toHaveLength(1);
    expect(mode(path.join(spool, spooled[0]!))).toBe("600");

    expect(await lllm(home, ["logs"])).toMatchObject({ code: 0 });
    const file = path.join(home, "logs.db");
    expect(mode(file)).toBe("600");
    // SQLite makes -wal and -shm while a connection is open, with the database's mode.
    const store = RunStore.openSync(file);
    try {
      expect(store.listRuns()).toHaveLength(1);
      for (const suffix of ["-wal", "-shm"]) expect(mode(file + suffix), suffix).toBe("600");
    } finally {
      store.close();
    }
  });

  it("an existing LLLM_HOME and logs.db of yours that others can read are tightened", async () => {
    const home = path.join(tempDir(), "home");
    mkdirSync(home, { mode: 0o755 });
    chmodSync(home, 0o755);
    expect(await run(home)).toMatchObject({ code: 0 });
    expect(mode(home)).toBe("700");
    expect(await lllm(home, ["logs"])).toMatchObject({ code: 0 });
    // An older lllm made its log 0644.
    chmodSync(path.join(home, "logs.db"), 0o644);
    expect(await lllm(home, ["logs"])).toMatchObject({ code: 0 });
    expect(mode(path.join(home, "logs.db"))).toBe("600");
  });

  it("a run's artifacts and the folders above them are private", () => {
    const home = path.join(tempDir(), "home");
    const previous = process.umask(0o022);
    try {
      const store = ArtifactStore.forRun({ LLLM_HOME: home }, { runId: "01ABCDEFGHJKMNPQRSTVWXYZ01" });
      const record = store.putValue({ salary: 1 }, "test");
      expect(existsSync(record.path)).toBe(true);
      expect(mode(record.path)).toBe("600");
      for (const folder of [home, path.join(home, "runs"), path.join(home, "runs", "01ABCDEFGHJKMNPQRSTVWXYZ01"), store.folder]) expect(mode(folder), folder).toBe("700");
    } finally {
      process.umask(previous);
    }
  });
});
