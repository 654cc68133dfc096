import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { documentationPages, fencedBlocks, readPage, type FencedBlock } from "../helpers/markdown.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * Every example a page marks as runnable runs, as docs/development.md describes: a page's ```sh run (and ```ts run)
 * blocks run in order in one shell session, in a fresh folder holding a copy of packages-example/, with `lllm` (and
 * `npx lllm`) running this clone's build, an empty home (no keys, no run log) and no network need; the `output`
 * block shown after one is compared with what it printed, stdout and stderr together, `…` standing for what varies.
 */

const JITI = path.join(ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
const LANGUAGES = new Set(["sh", "bash", "ts", "js"]);

const isRunnable = (block: FencedBlock): boolean => block.info.includes("run") && LANGUAGES.has(block.info[0] ?? "");

/** What a page's runnable blocks printed, block by block, and how the session ended. */
interface SessionResult {
  outputs: string[];
  /** Whether every block ran to its end (with `set -e`, a failing command ends the session). */
  finished: boolean;
  code: number | null;
  /** Everything the session printed, for a failure message. */
  all: string;
}

/** Run blocks in one bash session, as a reader pasting them into one terminal would; stdout and stderr together. */
async function runSession(blocks: readonly FencedBlock[], timeoutMs = 300_000): Promise<SessionResult> {
  const home = tempDir("lllm-docs-home-");
  const work = tempDir("lllm-docs-");
  const bin = tempDir("lllm-docs-bin-");
  cpSync(path.join(ROOT, "packages-example"), path.join(work, "packages-example"), { recursive: true });
  const shim = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`;
  for (const file of [path.join(bin, "lllm"), path.join(work, "node_modules/.bin/lllm")]) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, shim);
    chmodSync(file, 0o755);
  }
  // `import … from "lllm"` in an example (the mock model of the testing walk, library examples) finds this clone.
  symlinkSync(ROOT, path.join(work, "node_modules/lllm"), "dir");
  // A clone is a git repository: an example may put the examples back with `git checkout`.
  writeFileSync(path.join(work, ".gitignore"), "node_modules/\n");
  const git = (...args: string[]): void => void execFileSync("git", ["-c", "user.name=docs", "-c", "user.email=docs@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd: work, stdio: "ignore" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "the examples");
  const marker = `@@lllm-docs-${randomBytes(6).toString("hex")}@@`;
  const script = ["exec 2>&1", "set -e"];
  blocks.forEach((block, index) => {
    script.push(`printf '\\n%s %d\\n' '${marker}' ${index}`);
    if (block.info[0] === "ts" || block.info[0] === "js") {
      const file = path.join(work, `.docs-example-${index}.${block.info[0] === "ts" ? "ts" : "mjs"}`);
      writeFileSync(file, `${block.text}\n`);
      script.push(`node ${JSON.stringify(JITI)} ${JSON.stringify(file)}`);
    } else script.push(block.text);
  });
  script.push(`printf '\\n%s end\\n' '${marker}'`);
  // Offline: npm fetches nothing (`npx` of a missing command fails rather than download one), and HTTP goes only to
  // servers on this machine (every other request meets a proxy that is not there).
  const offline = { npm_config_offline: "true", HTTP_PROXY: "http://127.0.0.1:9", HTTPS_PROXY: "http://127.0.0.1:9", NO_PROXY: "127.0.0.1,localhost" };
  // The suite's code cache (see cleanEnv): compiled code only, nothing an example could see in its output.
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LANG: "C.UTF-8", NO_COLOR: "1", ...offline };
  // Its own process group: a server an example starts in the background goes with the session.
  const child = spawn("bash", ["--norc", "--noprofile", "-c", script.join("\n")], { cwd: work, env, stdio: ["ignore", "pipe", "inherit"], detached: true });
  let all = "";
  child.stdout.on("data", (chunk: Buffer) => (all += chunk.toString()));
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(killGroup, timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on("exit", (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  killGroup();
  await new Promise((resolve) => (child.stdout.readableEnded ? resolve(undefined) : child.stdout.on("close", resolve)));
  const outputs: string[] = [];
  for (const part of all.split(new RegExp(`\\n${marker} `)).slice(1)) {
    const newline = part.indexOf("\n");
    const index = part.slice(0, newline);
    if (index !== "end") outputs[Number(index)] = part.slice(newline + 1);
  }
  return { outputs, finished: all.includes(`\n${marker} end\n`), code, all };
}

/** Whether `actual` is what `expected` shows: line by line, `…` matching any text in a line, a line `…` any lines. */
function outputMatches(expected: string, actual: string): boolean {
  const want = expected.trimEnd().split("\n");
  const have = actual.trimEnd().split("\n");
  const line = (pattern: string): RegExp => new RegExp(`^${pattern.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  const patterns = want.map((text) => (text === "…" ? undefined : line(text)));
  const memo = new Map<string, boolean>();
  const match = (w: number, h: number): boolean => {
    const key = `${w},${h}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (w === want.length) result = h === have.length;
    else if (patterns[w] === undefined) result = match(w + 1, h) || (h < have.length && match(w, h + 1));
    else result = h < have.length && patterns[w]!.test(have[h]!) && match(w + 1, h + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

/** The problems of a page's examples once run: a block that failed, an output that differs. */
async function checkPage(page: string, markdown: string): Promise<string[]> {
  const blocks = fencedBlocks(markdown);
  const problems = blocks.filter((block) => block.output && !isRunnable(block)).map((block) => `${page}:${block.output!.line}: an output block follows a block that is not marked runnable (\`\`\`sh run), so it is never checked`);
  const runnable = blocks.filter(isRunnable);
  if (runnable.length === 0) return problems;
  const session = await runSession(runnable);
  runnable.forEach((block, index) => {
    const printed = session.outputs[index];
    if (printed === undefined) return;
    if (index === session.outputs.length - 1 && !session.finished) problems.push(`${page}:${block.line}: the block failed (exit ${session.code}); it printed:\n${printed}`);
    else if (block.output && !outputMatches(block.output.text, printed)) problems.push(`${page}:${block.line}: the output differs from the one shown at line ${block.output.line}.\n--- shown:\n${block.output.text}\n--- printed:\n${printed.trimEnd()}`);
  });
  if (session.outputs.length === 0) problems.push(`${page}: the session did not start (exit ${session.code}):\n${session.all}`);
  return problems;
}

describe("the documentation's runnable examples", () => {
  const pages = documentationPages().filter((page) => fencedBlocks(readPage(page)).some(isRunnable));

  it("are found on the pages that teach with them", () => {
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/getting-started.md"]));
  });

  it.each(pages)("%s: run offline, and print what the page shows", { timeout: 600_000 }, async (page) => {
    expect(await checkPage(page, readPage(page))).toEqual([]);
  });

  it("fail on a block that fails, on an output that differs, and on an output block nothing runs", { timeout: 120_000 }, async () => {
    const page = ["```sh run", "echo one; echo two >&2", "```", "", "```output", "one", "two", "```", "", "```sh run", "echo 'Took 12 ms'", "```", "```output", "Took … ms", "```",
      "```sh run", "echo three", "```", "```output", "four", "```", "```sh", "echo shown only", "```", "```output", "shown only", "```", "```sh run", "false", "```", "```sh run", "echo never", "```"].join("\n");
    expect(await checkPage("example.md", page)).toEqual([
      "example.md:25: an output block follows a block that is not marked runnable (```sh run), so it is never checked",
      "example.md:16: the output differs from the one shown at line 19.\n--- shown:\nfour\n--- printed:\nthree",
      "example.md:28: the block failed (exit 1); it printed:\n",
    ]);
    expect(outputMatches("a\n…\nd", "a\nb\nc\nd")).toBe(true);
    expect(outputMatches("a\n…\nd", "a\nd")).toBe(true);
    expect(outputMatches("a … z", "a b c z")).toBe(true);
    expect(outputMatches("a … z", "a b c")).toBe(false);
  });
});
