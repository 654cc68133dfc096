import { chmodSync, chownSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AS_ROOT, NOBODY } from "../helpers/runCliAs.js";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { lllm, project, PROMPT_PACKAGE, writeFile } from "./packageFixtures.js";

// A run refuses an lllm.lock of another user's, or one anyone may write (it decides which code runs): the package
// commands refuse it too, rather than fetch and trust what it pins, list as installed what no run uses, or write it.
// Another user's file needs root to make (chown); CI runs the suite as root.

describe.skipIf(!AS_ROOT && process.env.CI !== "true")("an lllm.lock that is not the user's", () => {
  it("is refused by install, list, add, update and remove, as by a run, and left as it was", async () => {
    const dir = project();
    writeFile(path.join(dir, "greet.tgz"), packageTarball(PROMPT_PACKAGE));
    const home = tempDir("lllm-home-");
    expect((await lllm(["add", "greet.tgz"], { cwd: dir, home })).code).toBe(0);
    const lock = path.join(dir, "lllm.lock");
    const before = readFileSync(lock, "utf8");
    for (const [how, reason] of [[() => chownSync(lock, NOBODY, NOBODY), `belongs to another user (uid ${NOBODY})`], [() => chmodSync(lock, 0o666), "anyone may write to it"]] as const) {
      how();
      for (const args of [["install"], ["list"], ["add", "greet.tgz"], ["update"], ["remove", "greet"], ["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi"]]) {
        const result = await lllm(args, { cwd: dir, home });
        expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(`${lock} is not used: `);
        expect(result.stderr).toContain(reason);
      }
      expect(readFileSync(lock, "utf8")).toBe(before);
      chownSync(lock, process.getuid!(), process.getgid!());
      chmodSync(lock, 0o644);
    }
  }, 180_000);
});
