import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, waitForFile, type DurableProject } from "../helpers/durableProject.js";
import { waitUntil } from "../helpers/processTree.js";

vi.setConfig({ testTimeout: 240_000 });

// What a person sees of a run that stopped before its end: Ctrl-C and SIGTERM say how to resume it, `lllm logs`
// marks it (and gives the command), `lllm logs show` says it, and shows where a resumed run was resumed.

let project: DurableProject | undefined;
afterEach(async () => {
  await project?.close();
  project = undefined;
});

// `project.inProcess` (the CLI's main() in this process): the reads of the log and the resumes. The runs that are
// stopped stay processes of their own (`project.start`), and the table and a resume to its end go through the built CLI
// (`project.run`) in one test, end to end.

interface Listed {
  id: string;
  status: string;
  resumable: boolean;
  resume_command?: string;
}

interface Totals {
  status: string;
  llm_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  duration_ms: number | null;
}

describe("a stopped run", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s during a tool that ignores it: the CLI exits after its grace, and the run is recorded as interrupted with what it spent", async (signal, code) => {
    project = await durableProject({ rounds: 8 });
    // Its third call blocks for good, deaf to the run's abort (a TypeScript tool awaiting a timer does so).
    project.blockTool("look", 2);
    const running = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitForFile(path.join(project.dir, "blocked"), 120_000), running.stderr()).toBe(true);
    process.kill(running.pid, signal);
    expect(await running.exit(60_000)).toBe(code);
    const listed = JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Array<Totals & Listed> };
    expect(listed.runs).toEqual([expect.objectContaining({ status: "interrupted", resumable: true, llm_calls: 3 })]);
    expect(listed.runs[0]!.prompt_tokens).toBeGreaterThan(0);
    expect(listed.runs[0]!.duration_ms).not.toBeNull();
    // The call it stopped during is still unfinished: the resume runs it again (`look` may run twice), and ends.
    project.clearMarks();
    const resumed = await project.inProcess(["run", "--resume"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(project.toolCalls().filter((call) => call === "look 2")).toHaveLength(2);
  });

  it("killed (SIGKILL) mid-run: lllm logs shows it crashed, with the model calls and tokens it recorded", async () => {
    project = await durableProject({ rounds: 8 });
    await project.crashInTool("look", 4);
    const listed = JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Array<Totals & Listed> };
    expect(listed.runs).toEqual([expect.objectContaining({ status: "crashed", resumable: true, llm_calls: 5 })]);
    expect(listed.runs[0]!.prompt_tokens).toBeGreaterThan(0);
    expect(listed.runs[0]!.completion_tokens).toBeGreaterThan(0);
  });


  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("%s says at once how to resume it; lllm logs marks it and gives the command", async (signal, code) => {
    project = await durableProject({ rounds: 8 });
    project.holdModel(3);
    const running = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitUntil(() => project!.holding(), 120_000), running.stderr()).toBe(true);
    process.kill(running.pid, signal);
    expect(await running.exit(60_000)).toBe(code);
    const stderr = running.stderr();
    const id = /lllm: run ([0-9A-Z]{26}) stopped before its end; resume it with: lllm run --resume \1\n/.exec(stderr)?.[1];
    expect(id, stderr).toBeDefined();
    // Said once, not again with the error.
    expect(stderr.split("resume it with").length).toBe(2);

    const table = await project.run(["logs"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${id}  .*  rounds  interrupted \\*  `, "m"));
    expect(table.stderr).toContain(`runs marked * stopped before their end and can go on from where they stopped: lllm run --resume ${id}`);
    const listed = JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Listed[] };
    expect(listed.runs).toEqual([expect.objectContaining({ id, status: "interrupted", resumable: true, resume_command: `lllm run --resume ${id}` })]);
    const shown = await project.inProcess(["logs", "show", id!]);
    expect(shown.stdout).toContain(`It stopped before its end; go on from where it stopped with: lllm run --resume ${id}`);

    // Resumed to its end: no longer marked; its transcript shows where it was resumed.
    project.clearMarks();
    const resumed = await project.run(["run", "--resume"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Listed[] };
    expect(after.runs).toEqual([expect.objectContaining({ id, status: "ok", resumable: false })]);
    expect(after.runs[0]).not.toHaveProperty("resume_command");
    const transcript = (await project.inProcess(["logs", "show", id!])).stdout;
    expect(transcript).toContain("resumed once (lllm run --resume)");
    // Three rounds before the mark (the fourth model call was cut short), the rest after it.
    const mark = transcript.indexOf("── resumed here · attempt 2");
    expect(mark).toBeGreaterThan(0);
    expect(transcript.slice(0, mark).match(/── model call/g)).toHaveLength(3);
    expect(transcript.slice(mark).match(/── model call/g)).toHaveLength(6);
    // The dialog is not shown again after the mark, as if it had been sent anew: the system prompt and the input once.
    expect(transcript.match(/\[system\] Do the rounds\./g)).toHaveLength(1);
    expect(transcript.match(/\[user\] go/g)).toHaveLength(1);
    expect(transcript).not.toContain("It stopped before its end");
  });

  it("a crashed run is marked too; a run that ended on a mistake in its files is not", async () => {
    project = await durableProject({ rounds: 8 });
    project.blockTool("look", 2);
    const running = project.start(["run", project.tactic(), "--input", "go"]);
    expect(await waitForFile(path.join(project.dir, "blocked")), running.stderr()).toBe(true);
    process.kill(running.pid, "SIGKILL");
    await running.exit();
    // Its key is not set: a mistake a resume would meet again (exit 2), recorded as the run's error.
    const noKey = await project.inProcess(["run", project.writeTactic("nokey", `name: nokey\nprompt: "{input}"\nglobal: {model_name: mock-model, invoker_config: {base_url: "MOCK_URL", api_key_env: NOT_SET_KEY}}\nagent_configs: [{name: a, system_prompt: hi}]\n`), "--input", "go"]);
    expect(noKey.code, noKey.stderr).toBe(2);
    expect(noKey.stderr).not.toContain("--resume");
    const listed = JSON.parse((await project.inProcess(["logs", "--json"])).stdout) as { runs: Listed[] };
    expect(listed.runs.map((run) => [run.status, run.resumable])).toEqual([["error", false], ["crashed", true]]);
  });
});
