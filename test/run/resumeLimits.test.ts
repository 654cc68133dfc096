import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, type DurableProject } from "../helpers/durableProject.js";
import { waitUntil } from "../helpers/processTree.js";

vi.setConfig({ testTimeout: 240_000 });

const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");

// The limits of a resumed run hold for the whole run, its earlier attempts included: `max_cost` counts what they
// spent (their recorded answers count again as they are replayed), `max_duration` the time they took.

interface FailureJson {
  error: { code: string };
  run_id: string;
  cost: number;
  usage: { llm_calls: number };
}

let project: DurableProject | undefined;
afterEach(async () => {
  await project?.close();
  project = undefined;
});

const LIMIT = "0.05";

// `project.inProcess` (the CLI's main() in this process): the runs to their end and the reads of the log. The attempts
// that crash stay processes of their own (`crashInTool`, `start`), and so does a resume that another resume of the same
// run follows: a resume holds its run until its process exits (`holdRun`), and this process does not. A resume and a
// `lllm logs` go through the built CLI (`project.run`), end to end.

/** Run the CLI with `args` until `look`'s call `n` blocks, SIGKILL it there, and let `lllm logs` read its record. */
async function crashAt(project: DurableProject, n: number, args: string[]): Promise<void> {
  await project.crashInTool("look", n, args);
  expect((await project.inProcess(["logs"])).code).toBe(0);
}

/** Change the run store as a test's scenario needs (the time an attempt began); how many rows it changed. */
function changeStore(project: DurableProject, sql: string): number {
  const database = new Libsql(path.join(project.home, "logs.db"));
  try {
    return database.prepare(sql).run().changes;
  } finally {
    database.close();
  }
}

describe("a resumed run's limits", () => {
  it("--max-cost counts what the first attempt spent: the resumed run stops where an uninterrupted one stops", async () => {
    // Uninterrupted, under the limit: where it stops, and what it spent.
    const whole = await durableProject({ rounds: 30 });
    const limited = await whole.inProcess(["run", whole.tactic(), "--input", "go", "--max-cost", LIMIT, "--json"]);
    await whole.close();
    expect(limited.code, limited.stderr).toBe(3);
    const stopped = JSON.parse(limited.stdout) as FailureJson;
    expect(stopped.error.code).toBe("limit_max_cost");
    const stopRequests = whole.modelRequests();
    expect(stopRequests).toBeGreaterThan(8);
    expect(stopRequests).toBeLessThan(31);

    project = await durableProject({ rounds: 30 });
    project.holdModel(6);
    const first = project.start(["run", project.tactic(), "--input", "go", "--max-cost", LIMIT]);
    expect(await waitUntil(() => project!.holding(), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, "SIGKILL");
    await first.exit();
    project.clearMarks();
    // The run's own limit is kept with it: the resume is given none.
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(3);
    const json = JSON.parse(resumed.stdout) as FailureJson;
    expect(json.error.code).toBe("limit_max_cost");
    expect(json.cost).toBeCloseTo(stopped.cost, 10);
    expect(json.usage.llm_calls).toBe(stopped.usage.llm_calls);
    // Once per round across the attempts, and the one held when it was killed.
    expect(project.modelRequests()).toBe(stopRequests + 1);
    expect(resumed.stderr).toMatch(/lllm: run [0-9A-Z]{26} stopped before its end; resume it with: lllm run --resume [0-9A-Z]{26} --max-cost <higher>/);

    // Stopped by its budget, it goes on with a higher one, to the uninterrupted run's answer and cost.
    const reference = await durableProject({ rounds: 30 });
    const full = await reference.inProcess(["run", reference.tactic(), "--input", "go", "--json"]);
    await reference.close();
    // Not an interrupted or crashed run any more (it ran out of budget): resumed by its id, which `--resume` alone names.
    const unnamed = await project.inProcess(["run", "--resume"]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain(`--resume: no interrupted or crashed run was started from this folder\n  The last run started here that can go on stopped on a limit: lllm run --resume ${json.run_id} (give the limit anew, higher: --max-cost, --max-steps …).`);
    // An id after another flag (`--resume --json ID`) reads as the tactic: no such file, it is the run's id.
    const nowhere = await project.inProcess(["run", "--resume", "--json", "NOSUCHID"]);
    expect(nowhere.code).toBe(2);
    expect((JSON.parse(nowhere.stdout) as { error: { message: string } }).error.message).toBe("--resume: NOSUCHID is neither a tactic file nor a run in the log");
    const higher = await project.inProcess(["run", "--resume", "--json", json.run_id, "--max-cost", "1"]);
    expect(higher.code, higher.stderr).toBe(0);
    const done = JSON.parse(higher.stdout) as { output: string; cost: number };
    expect(done.output).toBe((JSON.parse(full.stdout) as { output: string }).output);
    expect(done.cost).toBeCloseTo((JSON.parse(full.stdout) as { cost: number }).cost, 10);
  });

  it("--max-tool-calls stops a turn of two calls after the first: the first's outcome is kept, and the resume with a higher limit runs the second only", async () => {
    // One turn asks for two calls of a tool that may not run twice; the limit lets the first run and refuses the second.
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    project = await durableProject({
      answer: (messages) => {
        const results = messages.filter((message) => message.role === "tool").length;
        if (results >= 2) return { text: "noted both", usage };
        return { tool_calls: [{ id: "call_a", name: "note", arguments: { n: 1 } }, { id: "call_b", name: "note", arguments: { n: 2 } }], usage };
      },
    });
    const limited = await project.inProcess(["run", project.tactic(), "--input", "go", "--max-tool-calls", "1", "--json"]);
    expect(limited.code, limited.stderr).toBe(3);
    const stopped = JSON.parse(limited.stdout) as FailureJson;
    expect(stopped.error.code).toBe("limit_max_tool_calls");
    expect(project.toolCalls()).toEqual(["note 1"]);
    // The first call ended on its own (the limit stopped the run as it ran): its outcome is the record's, not a call
    // cut short whose outcome is unknown.
    const resumed = await project.inProcess(["run", "--resume", stopped.run_id, "--max-tool-calls", "5", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { output: string }).output).toBe("noted both");
    expect(project.toolCalls()).toEqual(["note 1", "note 2"]);
    expect(project.modelRequests()).toBe(2);
  });

  it("--max-duration counts the time the earlier attempts took", async () => {
    project = await durableProject({ rounds: 30 });
    await project.crashInTool("look", 4, ["run", project.tactic(), "--input", "go"]);
    // What crashAt does, with the built `lllm logs` reading the record (the other reads run in this process).
    expect((await project.run(["logs"])).code).toBe(0);
    // As if the first attempt had begun an hour before its last step.
    changeStore(project, "UPDATE runs SET started_at = started_at - 3600000");
    const requests = project.modelRequests();
    // A spawn: resumed again below (see inProcess).
    const resumed = await project.run(["run", "--resume", "--max-duration", "1800", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(3);
    const failure = JSON.parse(resumed.stdout) as FailureJson;
    expect(failure.error.code).toBe("limit_max_duration");
    expect(resumed.stderr).toContain("max_duration reached");
    expect(project.modelRequests()).toBe(requests);
    // Given enough for the whole run, it finishes.
    const enough = await project.inProcess(["run", "--resume", failure.run_id, "--max-duration", "7200"]);
    expect(enough.code, enough.stderr).toBe(0);
    expect(enough.stdout).toBe("done: 30 rounds, last value 203\n");
  });

  it("--max-duration counts the first attempt after two crashes in a row", async () => {
    project = await durableProject({ rounds: 30 });
    await crashAt(project, 4, ["run", project.tactic(), "--input", "go"]);
    // As if the first attempt had begun an hour before its last step.
    changeStore(project, "UPDATE runs SET started_at = started_at - 3600000");
    // The second attempt crashes too, a few rounds on.
    await crashAt(project, 8, ["run", "--resume"]);
    const third = await project.inProcess(["run", "--resume", "--max-duration", "1800", "--json"]);
    expect(third.code, third.stderr).toBe(3);
    expect((JSON.parse(third.stdout) as FailureJson).error.code).toBe("limit_max_duration");
  });

  it("--max-duration counts an attempt that crashed between one that ended and another crash", async () => {
    project = await durableProject({ rounds: 30 });
    await crashAt(project, 4, ["run", project.tactic(), "--input", "go"]);
    // The second attempt ends (out of budget): its recorded duration counts the first two.
    // A spawn: resumed again below (see inProcess).
    const second = await project.run(["run", "--resume", "--max-cost", "0.03", "--json"]);
    expect(second.code, second.stderr).toBe(3);
    const id = (JSON.parse(second.stdout) as FailureJson).run_id;
    // The third crashes, as if begun an hour before its last step; the fourth crashes too.
    await crashAt(project, 13, ["run", "--resume", id]);
    expect(changeStore(project, "UPDATE run_attempts SET started_at = started_at - 3600000 WHERE attempt = 3")).toBe(1);
    await crashAt(project, 16, ["run", "--resume"]);
    const fifth = await project.inProcess(["run", "--resume", "--max-duration", "1800", "--json"]);
    expect(fifth.code, fifth.stderr).toBe(3);
    expect((JSON.parse(fifth.stdout) as FailureJson).error.code).toBe("limit_max_duration");
  });
});
