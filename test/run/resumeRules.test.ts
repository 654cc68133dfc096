import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, roundTurn, waitForFile, type DurableProject, type WireMessage } from "../helpers/durableProject.js";
import { holdRun } from "../../src/cli/resumeRun.js";
import { endedPid } from "../helpers/endedPid.js";
import { tempDir } from "../helpers/tempTree.js";
import { runCli } from "../helpers/runCli.js";

vi.setConfig({ testTimeout: 240_000 });

const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");

// What `lllm run --resume` refuses, and how it says so: a tactic that changed since the run (unless --force), a record
// that is damaged or missing, a run that is not stopped, flags that would make it another run.

let project: DurableProject;
afterEach(async () => {
  await project?.close();
});

// `project.inProcess`: the CLI's main() in this process. A resume holds its run until its process exits (`holdRun`),
// and this process does not exit: a resume that another resume of the same run follows in the test is a spawn
// (`project.run`), and so are the runs killed on purpose.

/** A 10-round run killed while `look 7` runs (idempotent: a resume may run it again). */
async function killedRun(): Promise<void> {
  project = await durableProject({ rounds: 10 });
  await project.crashInTool("look", 7);
}

describe("lllm run --resume refuses", () => {
  it("a tactic whose tool changed, saying what changed; --force resumes it anyway", async () => {
    await killedRun();
    const tools = path.join(project.dir, "pkg", "tools", "counted.mjs");
    writeFileSync(tools, readFileSync(tools, "utf8").replace("Look a value up", "Look a value up, fast"));
    const requests = project.modelRequests();
    // Spawned: it holds the run, which the resume with --force then takes (see `inProcess`).
    const refused = await project.run(["run", "--resume"]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("the tactic changed since run");
    expect(refused.stderr).toContain("tool `look` of agent `worker` changed");
    expect(refused.stderr).not.toContain("`note`");
    expect(refused.stderr).toContain("--force");
    expect(project.modelRequests()).toBe(requests);
    const forced = await project.inProcess(["run", "--resume", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe("done: 10 rounds, last value 63\n");
    expect(forced.stderr).toContain("--force: resuming run");
    expect(forced.stderr).toContain("tool `look` of agent `worker` changed");
    // Replayed in order: only the rounds the first attempt did not finish asked the model.
    expect(project.modelRequests()).toBe(11);
  });

  it("a changed system prompt, and a model given with --model", async () => {
    await killedRun();
    const changed = readFileSync(project.tactic(), "utf8");
    writeFileSync(project.tactic(), changed.replace("Do the rounds.", "Do the rounds well."));
    const prompt = await project.run(["run", "--resume"]); // spawned: it holds the run (see `inProcess`)
    expect(prompt.code, prompt.stderr).toBe(2);
    expect(prompt.stderr).toContain("the system prompt of agent `worker` changed");
    writeFileSync(project.tactic(), changed);
    const model = await project.inProcess(["run", "--resume", "--model", "other-model"]);
    expect(model.code, model.stderr).toBe(2);
    expect(model.stderr).toContain("the settings of agent `worker` changed");
  });

  it("a damaged record, with an error naming the run", async () => {
    await killedRun();
    // Merged into logs.db by a reader, then damaged there.
    expect((await project.run(["logs"])).code).toBe(0);
    const database = new Libsql(path.join(project.home, "logs.db"));
    database.prepare("UPDATE tool_journal SET outcome = '{\"resultStr\": \"val' WHERE key LIKE '%call_main_2%'").run();
    database.close();
    const result = await project.inProcess(["run", "--resume"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/run [0-9A-Z]{26} cannot be resumed: its record is damaged: the recorded outcome of its call of `look` \(agent `worker`\) is not readable/);
    expect(result.stdout).toBe("");
  });

  it("a run that is not in the log, or that ended with its answer", async () => {
    await killedRun();
    const missing = await project.inProcess(["run", "--resume", "01J0000000000000000000000X"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("--resume: no run `01J0000000000000000000000X` in the log");
    const done = await project.inProcess(["run", "--resume", "--json"]);
    expect(done.code, done.stderr).toBe(0);
    const { run_id: id } = JSON.parse(done.stdout) as { run_id: string };
    const again = await project.inProcess(["run", "--resume", id]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(`run ${id} ended with its answer`);
    // Nothing left to resume here.
    const none = await project.inProcess(["run", "--resume"]);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain("no interrupted or crashed run was started from this folder");
  });

  it("a run being resumed already, or still running", async () => {
    await killedRun();
    project.blockTool("look", 8);
    const resuming = project.start(["run", "--resume"]);
    expect(await waitForFile(path.join(project.dir, "blocked")), resuming.stderr()).toBe(true);
    const [run] = (JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Array<{ id: string; status: string }> }).runs;
    expect(run!.status).toBe("running");
    const second = await project.inProcess(["run", "--resume", run!.id]);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(/--resume: run [0-9A-Z]{26} (is being resumed already|is still running) \(process \d+\)/);
    process.kill(resuming.pid, "SIGKILL");
    await resuming.exit();
    project.clearMarks();
    // The resume that was killed holds it no more.
    const third = await project.inProcess(["run", "--resume"]);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toBe("done: 10 rounds, last value 63\n");
  });

  it("flags that would make it another run", async () => {
    await killedRun();
    for (const flags of [["--input", "other"], ["--var", "a=b"], ["--no-log"], ["--dry-run"]]) {
      const result = await project.inProcess(["run", "--resume", ...flags]);
      expect(result.code, flags.join(" ")).toBe(2);
      expect(result.stderr).toContain(`--resume goes on with the run's own input, vars and record: it cannot go with ${flags[0]}`);
    }
    const force = await project.inProcess(["run", project.tactic(), "--input", "go", "--force"]);
    expect(force.code, force.stderr).toBe(2);
    expect(force.stderr).toContain("--force goes with --resume");
  });
});

describe("lllm run --resume picks", () => {
  it("by default the last interrupted or crashed run of this folder (of the tactic, when named); an id picks another", async () => {
    await killedRun();
    // A second run of another tactic, killed too: the default without a tactic is the newest one.
    const other = project.writeTactic("other", readFileSync(project.tactic(), "utf8").replace("name: rounds", "name: other"));
    project.blockTool("note", 3);
    const second = project.start(["run", other, "--input", "go"]);
    expect(await waitForFile(path.join(project.dir, "blocked")), second.stderr()).toBe(true);
    process.kill(second.pid, "SIGKILL");
    await second.exit();
    project.clearMarks();
    const byTactic = await project.inProcess(["run", project.tactic(), "--resume", "--json"]);
    expect(byTactic.code, byTactic.stderr).toBe(0);
    expect((JSON.parse(byTactic.stdout) as { output: string }).output).toBe("done: 10 rounds, last value 63");
    // The other one stopped in `note 3` (not idempotent): the default picks it, and says what stops it.
    const latest = await project.inProcess(["run", "--resume"]);
    expect(latest.code, latest.stderr).toBe(2);
    expect(latest.stderr).toContain("the run stopped during a call of `note` (agent `worker`, arguments {\"n\":3})");
  });
});

/**
 * A run of `rounds` rounds whose model's first answer in round 4 calls a tool the agent is not offered (5,000 + 100
 * tokens): it ends there (exit 1).
 */
async function misledRun(rounds: number): Promise<{ code: number | null; stderr: string }> {
  let misled = false;
  const bad = { tool_calls: [{ id: "call_bad", name: "erase", arguments: {} }], usage: { prompt_tokens: 5000, completion_tokens: 100 } };
  project = await durableProject({ rounds, answer: (messages) => (messages.filter((message) => message.role === "tool").length === 4 && !misled ? ((misled = true), bad) : undefined) });
  const first = await project.inProcess(["run", project.tactic(), "--input", "go"]);
  expect(first.code, first.stderr).toBe(1);
  return first;
}

describe("lllm run --resume of a run its model's answer ended, resumed twice", () => {
  it("does not replay the answer the first resume asked for again, nor give its replacement to another request", async () => {
    const first = await misledRun(10);
    const id = /resume it with: lllm run --resume ([0-9A-Z]{26})/.exec(first.stderr)![1]!;
    // The first resume asks round 4 again, goes on, and is killed in round 7's tool.
    await project.crashInTool("look", 7, ["run", "--resume", id]);
    const requests = project.modelRequests();
    const second = await project.inProcess(["run", "--resume", id, "--json"]);
    expect(second.code, second.stderr).toBe(0);
    expect((JSON.parse(second.stdout) as { output: string }).output).toBe("done: 10 rounds, last value 63");
    // Rounds 0 to 7 were answered before: only rounds 8 to 10 went to the model.
    expect(project.modelRequests() - requests).toBe(3);
  });
});

describe("lllm run --resume that fails on its own mistake", () => {
  it("leaves the run resumable, with what it spent: a resume without the key, then with it, goes on", async () => {
    await killedRun();
    const listed = async (): Promise<{ resumable: boolean; llm_calls: number; prompt_tokens: number; cost: number }> =>
      (JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Array<{ resumable: boolean; llm_calls: number; prompt_tokens: number; cost: number }> }).runs[0]!;
    // The first attempt asked the model 8 times (rounds 0 to 7; it died in round 7's tool).
    const spentBefore = Array.from({ length: 8 }, (_, round) => 1000 + round * 40).reduce((sum, tokens) => sum + tokens, 0);
    // Both spawned: each holds the run, which the resume with the key then takes (see `inProcess`).
    const noKey = await runCli(["run", "--resume"], { cwd: project.dir, env: { ...project.env, MOCK_KEY: undefined } });
    expect(noKey.code, noKey.stderr).toBe(2);
    expect(noKey.stderr).toContain("MOCK_KEY");
    const id = /can still go on once that is fixed: lllm run --resume ([0-9A-Z]{26})/.exec(noKey.stderr)?.[1];
    expect(id, noKey.stderr).toBeDefined();
    const after = await listed();
    expect(after.resumable).toBe(true);
    // And a bare --resume finds it, as it found the crashed run.
    const bare = await runCli(["run", "--resume", "--json"], { cwd: project.dir, env: { ...project.env, MOCK_KEY: undefined } });
    expect(bare.stderr).toContain(`can still go on once that is fixed: lllm run --resume ${id}`);
    const bareJson = JSON.parse(bare.stdout) as { usage: { llm_calls: number; prompt_tokens: number } };
    // Its --json says what the run spent, as its cost does: the first attempt's calls.
    expect([bareJson.usage.llm_calls, bareJson.usage.prompt_tokens]).toEqual([8, spentBefore]);
    expect(after.llm_calls).toBe(8);
    expect(after.prompt_tokens).toBe(spentBefore);
    const resumed = await project.inProcess(["run", "--resume", id!, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as { output: string; cost: number };
    expect(json.output).toBe("done: 10 rounds, last value 63");
    // The whole run's cost: its 11 answers, each once.
    const whole = Array.from({ length: 11 }, (_, round) => (1000 + round * 40) * 3 + (20 + (round % 5)) * 15).reduce((sum, micro) => sum + micro, 0) / 1e6;
    expect(json.cost).toBeCloseTo(whole, 9);
    expect((await listed()).cost).toBeCloseTo(whole, 9);
  });
});

describe("lllm run --resume of a run that continued another", () => {
  it("starts again from the dialog it continued, so its recorded rounds are replayed", async () => {
    // Rounds are counted from the last user message: a continued dialog does 6 rounds of its own.
    project = await durableProject({
      answer: (messages: WireMessage[]) => {
        const user = messages.filter((message) => message.role === "user").length;
        const round = messages.slice(messages.map((message) => message.role).lastIndexOf("user")).filter((message) => message.role === "tool").length;
        return roundTurn(round, 6, { agent: `turn${user}` });
      },
    });
    const first = await project.inProcess(["run", project.tactic(), "--input", "first", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const firstId = (JSON.parse(first.stdout) as { run_id: string }).run_id;
    project.blockTool("look", 4);
    const second = project.start(["run", "--continue", firstId, "--input", "second"]);
    expect(await waitForFile(path.join(project.dir, "blocked")), second.stderr()).toBe(true);
    process.kill(second.pid, "SIGKILL");
    await second.exit();
    project.clearMarks();
    const requests = project.modelRequests();
    const resumed = await project.inProcess(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = JSON.parse(resumed.stdout) as { output: string; resumed: { replayed_model_calls: number } };
    expect(json.output).toBe("turn2: 6 rounds, last value 35");
    expect(json.resumed.replayed_model_calls).toBe(5);
    // Rounds 5 and 6 only: the continued dialog's rounds were replayed.
    expect(project.modelRequests() - requests).toBe(2);
  });
});

describe("holdRun", () => {
  it("lets one process at a time resume a run; a hold left by a process that is gone is taken over; one exit hook releases them all", async () => {
    const home = tempDir("lllm-hold-");
    const storeFile = path.join(home, "logs.db");
    const hooks = process.listenerCount("exit");
    holdRun("01J0000000000000000000000A", { storeFile });
    expect(() => holdRun("01J0000000000000000000000A", { storeFile })).toThrow(`run 01J0000000000000000000000A is being resumed already (process ${process.pid})`);
    // Another run is another hold.
    holdRun("01J0000000000000000000000B", { storeFile });
    // A process that ended left its hold: taken over.
    writeFileSync(path.join(home, "runs", "01J0000000000000000000000C.resuming"), String(await endedPid()));
    holdRun("01J0000000000000000000000C", { storeFile });
    expect(readFileSync(path.join(home, "runs", "01J0000000000000000000000C.resuming"), "utf8")).toBe(String(process.pid));
    // The holds of a process are released by one exit hook (at most one added, if an earlier hold did not add it).
    expect(process.listenerCount("exit") - hooks).toBeLessThanOrEqual(1);
  });
});


describe("lllm run --resume of a run its model's answer ended", () => {
  it("asks the model again for that answer instead of replaying it into the same end, and counts what both cost", async () => {
    const first = await misledRun(6);
    expect(first.stderr).toContain("agent `worker` called the tool `erase`, which is not offered on this turn");
    const id = /resume it with: lllm run --resume ([0-9A-Z]{26})/.exec(first.stderr)?.[1];
    expect(id, first.stderr).toBeDefined();
    const resumed = await project.inProcess(["run", "--resume", id!, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("asking agent `worker` again for the answer that ended it");
    const json = JSON.parse(resumed.stdout) as { output: string; cost: number; usage: { llm_calls: number; prompt_tokens: number } };
    expect(json.output).toBe("done: 6 rounds, last value 35");
    // The model: once per round, and once more for the answer that was asked again; each tool once.
    expect(project.modelRequests()).toBe(8);
    expect(project.toolCalls()).toEqual(["note 0", "look 1", "look 2", "note 3", "look 4", "look 5"]);
    // What the run cost is the whole run's: its 7 rounds' answers and the bad one.
    const rounds = Array.from({ length: 7 }, (_, round) => ({ prompt: 1000 + round * 40, completion: 20 + (round % 5) }));
    const prompt = rounds.reduce((sum, round) => sum + round.prompt, 5000);
    const completion = rounds.reduce((sum, round) => sum + round.completion, 100);
    expect(json.usage.llm_calls).toBe(8);
    expect(json.usage.prompt_tokens).toBe(prompt);
    expect(json.cost).toBeCloseTo((prompt * 3 + completion * 15) / 1e6, 9);
  });
});
