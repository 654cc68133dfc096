import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { durableProject, type DurableProject } from "../helpers/durableProject.js";
import { Tmux } from "../helpers/tmux.js";

vi.setConfig({ testTimeout: 240_000 });

// At a terminal, `lllm run --resume` asks before it runs again a call its stop cut short (of a tool not declared
// idempotent): yes runs it, anything else stops the resume before anything runs.

const tmux = new Tmux();
afterAll(() => tmux.kill());
let project: DurableProject | undefined;
afterEach(async () => {
  await project?.close();
  project = undefined;
});

async function stoppedInNote(): Promise<DurableProject> {
  const made = await durableProject({ rounds: 8 });
  await made.crashInTool("note", 3);
  return made;
}

describe("lllm run --resume at a terminal", () => {
  it("asks before running again a call cut short; yes runs it, and the run goes on to its answer", async () => {
    project = await stoppedInNote();
    const session = tmux.startLllm(["run", "--resume"], project.env as Record<string, string>, project.dir);
    await tmux.until(session, (text) => text.includes("the run stopped during a call of note({\"n\":3}) (agent `worker`)") && text.includes("Run it again? [y/N]"), "the question");
    tmux.type(session, "y");
    tmux.keys(session, "Enter");
    const screen = await tmux.until(session, (text) => text.includes("EXIT="), "the end");
    expect(screen).toContain("done: 8 rounds, last value 49");
    expect(screen).toContain("EXIT=0");
    expect(project.toolCalls().filter((call) => call === "note 3")).toHaveLength(2);
  });

  it("anything but yes stops the resume before anything runs", async () => {
    project = await stoppedInNote();
    const requests = project.modelRequests();
    const session = tmux.startLllm(["run", "--resume"], project.env as Record<string, string>, project.dir);
    await tmux.until(session, (text) => text.includes("Run it again? [y/N]"), "the question");
    tmux.keys(session, "Enter");
    const screen = await tmux.until(session, (text) => text.includes("EXIT="), "the end");
    expect(screen).toContain("it is not run again");
    expect(screen).toContain("EXIT=2");
    expect(project.modelRequests()).toBe(requests);
    expect(project.toolCalls().filter((call) => call === "note 3")).toHaveLength(1);
  });
});
