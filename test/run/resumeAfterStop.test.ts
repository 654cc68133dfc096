import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, waitForFile, type DurableProject } from "../helpers/durableProject.js";

vi.setConfig({ testTimeout: 240_000 });

// Ctrl-C or SIGTERM during a tool call that does not heed its abort: the run waits for the call, which ends with its
// result after the stop. That call is whole: its outcome is in the run's journal before the run goes on, so that
// `lllm run --resume` answers it from the record (it is not run again, nor called unknown), and `lllm logs show`
// agrees with what the resume did.

let project: DurableProject | undefined;
afterEach(async () => {
  await project?.close();
  project = undefined;
});

interface RunJson {
  output: string;
  resumed?: { attempt: number; replayed_model_calls: number; replayed_tool_calls: number };
}

const ROUNDS = 8;
/** The calls of an uninterrupted run, in order: `note` (not idempotent) on rounds 0, 3, 6, else `look`. */
const CALLS = Array.from({ length: ROUNDS }, (_, n) => `${n % 3 === 0 ? "note" : "look"} ${n}`);

describe("a run stopped during a call that ends after the stop", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s: the call's outcome is recorded; the resume replays it without --rerun-unknown, and it ran once", async (signal, code) => {
    project = await durableProject({ rounds: ROUNDS });
    project.outlastStop("note", 3);
    const first = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitForFile(path.join(project.dir, "blocked"), 120_000), first.stderr()).toBe(true);
    process.kill(first.pid, signal);
    expect(await first.exit(60_000), first.stderr()).toBe(code);
    // The call ended after the stop, with its result.
    expect(existsSync(path.join(project.dir, "outlasted")), first.stderr()).toBe(true);
    expect(project.toolCalls()).toEqual(CALLS.slice(0, 4));

    const stopped = await project.run(["logs", "show", "last"]);
    expect(stopped.stdout).toMatch(/── tool note · worker · ok · .*\n {2}arguments \{"n":3\}\n {2}result [^\n]*\n {4}---\n {4}noted 3\n/);

    project.clearMarks();
    const resumed = await project.run(["run", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("outcome was never recorded");
    const json = JSON.parse(resumed.stdout) as RunJson;
    expect(json.output).toBe(`done: ${ROUNDS} rounds, last value ${(ROUNDS - 1) * 7}`);
    // Rounds 0 to 3 from the record (the call that outlasted the stop among them), the rest live.
    expect(json.resumed).toEqual({ attempt: 2, replayed_model_calls: 4, replayed_tool_calls: 4 });
    // Every call ran exactly once across both attempts.
    expect(project.toolCalls()).toEqual(CALLS);
    expect(readFileSync(path.join(project.dir, "notes.txt"), "utf8")).toBe("note 0\nnote 3\nnote 6\n");

    // The log agrees: one row per call, `note 3` once and before the resume mark, the run ended ok.
    const transcript = (await project.run(["logs", "show", "last"])).stdout;
    const mark = transcript.indexOf("── resumed here · attempt 2");
    expect(mark, transcript).toBeGreaterThan(0);
    expect(transcript.match(/── tool (note|look) · worker · ok/g)).toHaveLength(ROUNDS);
    expect(transcript.match(/arguments \{"n":3\}/g)).toHaveLength(1);
    expect(transcript.indexOf('arguments {"n":3}')).toBeLessThan(mark);
    expect(transcript.slice(0, mark).match(/── tool /g)).toHaveLength(4);
    const listed = JSON.parse((await project.run(["logs", "--json"])).stdout) as { runs: Array<{ status: string; resumable: boolean }> };
    expect(listed.runs).toEqual([expect.objectContaining({ status: "ok", resumable: false })]);
  });
});
