import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/** A home whose keys.json is a link to `destination`, and a one-agent tactic answered by a scripted model. */
function linkedHome(destination: (dir: string) => string): { home: string; link: string; target: string; tactic: string; turns: string } {
  const dir = tempDir("lllm-keys-link-");
  const home = path.join(dir, "home");
  mkdirSync(home, { mode: 0o700 });
  const target = destination(dir);
  const link = path.join(home, "keys.json");
  symlinkSync(target, link);
  const tactic = path.join(dir, "t.yaml");
  writeFileSync(tactic, "global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n");
  const turns = path.join(dir, "turns.json");
  writeFileSync(turns, JSON.stringify(["the answer"]));
  return { home, link, target, tactic, turns };
}

describe("a keys.json that is a link to no file (a volume not mounted, a dotfiles checkout moved)", () => {
  it("is not taken for 'no keys': commands that may use a key stop with exit 2, saying where the link leads and how to fix it", async () => {
    const { home, link, target, tactic, turns } = linkedHome((dir) => path.join(dir, "vault", "keys.json"));
    const said = `the keys file ${link} is a link to ${target}, which does not exist (or is a loop of links): no key could be read from it`;
    const run = await runCli(["run", tactic, "--input", "hi", "--model", `scripted:${turns}`], { env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(said);
    expect(run.stderr).toContain(`create that file (printf '{}' > ${target} && chmod 600 ${target})`);
    const list = await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } });
    expect(list.code, list.stderr).toBe(2);
    expect(list.stderr).toContain(said);
    // `models` counts the keys as not set, and says why, as for a keys file others may read.
    const models = await runCliInProcess(["models"], { env: { LLLM_HOME: home } });
    expect(models.code, models.stderr).toBe(0);
    expect(models.stderr).toContain(`${said}: its keys count as not set here`);
    const doctor = await runCliInProcess(["doctor", "--json"], { env: { LLLM_HOME: home } });
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks;
    expect(checks.find((check) => check.name === "keys file")).toMatchObject({ status: "fail", detail: said });
  });

  it("a link to a folder others may list is called a link to no file, not a keys file others may read", async () => {
    const { home, link, target } = linkedHome((dir) => {
      mkdirSync(path.join(dir, "folder"), { mode: 0o755 });
      return path.join(dir, "folder");
    });
    const list = await runCliInProcess(["keys", "list"], { env: { LLLM_HOME: home } });
    expect(list.code, list.stderr).toBe(2);
    expect(list.stderr).toContain(`the keys file ${link} is a link to ${target}, which is not a regular file: no key could be read from it`);
    expect(list.stderr).not.toContain("may be read by others");
  });

  it("a home with no keys.json at all still has no keys, and runs", async () => {
    const { tactic, turns } = linkedHome((dir) => path.join(dir, "nowhere"));
    const home = tempDir("lllm-keys-none-");
    const run = await runCliInProcess(["run", tactic, "--input", "hi", "--model", `scripted:${turns}`], { env: { LLLM_HOME: home } });
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: "the answer\n" });
  });
});
