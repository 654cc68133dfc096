import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { StreamedLine } from "../../src/cli/StreamedLine.js";
import { BIN, ROOT, emptyHome, runCli } from "../helpers/runCli.js";

describe("StreamedLine", () => {
  it("ends an open streamed line before a log line, only when both streams are one terminal", () => {
    const terminal = new StreamedLine({ stdout: true, stderr: true });
    expect(terminal.breakForLog()).toBe("");
    terminal.text("It is sun");
    terminal.text("ny.");
    expect(terminal.breakForLog()).toBe("\n");
    expect(terminal.breakForLog()).toBe("");
    expect(terminal.end()).toBe("");
    terminal.text("More");
    expect(terminal.end()).toBe("\n");
    const piped = new StreamedLine({ stdout: false, stderr: true });
    piped.text("partial");
    expect(piped.breakForLog()).toBe("");
    expect(piped.end()).toBe("\n");
  });

  it("shows the answer's control characters as escapes on a terminal; into a pipe the answer is written as it is", () => {
    expect(new StreamedLine({ stdout: true, stderr: false }).text("a\u001b[8mb\tc\n")).toBe("a\\u001b[8mb\tc\n");
    expect(new StreamedLine({ stdout: false, stderr: true }).text("a\u001b[8mb\n")).toBe("a\u001b[8mb\n");
  });
});

/** `script` (util-linux) gives the CLI a real terminal for stdout and stderr. */
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe("--verbose on a terminal", () => {
  it.skipIf(!hasScript && process.env.CI !== "true")("the streamed answer and the next log line are on separate lines", () => {
    const command = [process.execPath, BIN, "run", "packages-example/weather/tactics/weather.yaml", "--model", "scripted:packages-example/weather/scripted/paris-tokyo.yaml", "--input", "hi", "--verbose"].map((word) => `'${word}'`).join(" ");
    const output = execFileSync("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1", TERM: "dumb" }, encoding: "utf8", timeout: 60_000 });
    const lines = output.replace(/\r/g, "").split("\n");
    expect(lines).toContain("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
    expect(lines.some((line) => line.startsWith("[weather_bot] reply: It is sunny"))).toBe(true);
  });
});

describe("--help", () => {
  it("run --help lists the global --verbose", async () => {
    const result = await runCli(["run", "--help"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/-v, --verbose\s+show stack traces/);
  });
});
