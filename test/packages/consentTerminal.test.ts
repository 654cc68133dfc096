import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";
import { cacheOf, project, TOOL_PACKAGE, writeFile } from "./packageFixtures.js";

// Consent at a terminal, as a person gives it: the code is shown, and only a yes installs the package.

const tmux = new Tmux();
afterAll(() => tmux.kill());

describe("lllm add at a terminal", () => {
  it("shows the code and asks; no installs nothing, yes installs it as trusted at the terminal", async () => {
    const dir = project({ withTool: true });
    writeFile(path.join(dir, "hello.tgz"), packageTarball(TOOL_PACKAGE));
    const home = tempDir("lllm-home-");
    const refused = tmux.startLllm(["add", "hello.tgz"], { LLLM_HOME: home, NO_COLOR: "1" }, dir);
    await tmux.until(refused, (text) => text.includes("Trust this code and install it? [y/N]"), "the question");
    expect(tmux.screen(refused)).toContain("tools/hello.ts: TypeScript, tool code, run when the package loads");
    tmux.type(refused, "n");
    tmux.keys(refused, "Enter");
    await tmux.until(refused, (text) => text.includes("EXIT=2"), "exit 2");
    expect(existsSync(path.join(dir, "lllm.lock"))).toBe(false);
    expect(cacheOf(home)).toEqual({ packages: [], other: [] });

    const accepted = tmux.startLllm(["add", "hello.tgz"], { LLLM_HOME: home, NO_COLOR: "1" }, dir);
    await tmux.until(accepted, (text) => text.includes("[y/N]"), "the question");
    tmux.type(accepted, "y");
    tmux.keys(accepted, "Enter");
    await tmux.until(accepted, (text) => text.includes("EXIT=0"), "exit 0");
    expect(JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages["file:hello.tgz"].trusted).toEqual({ by: expect.any(String), how: "terminal" });
  }, 120_000);
});
