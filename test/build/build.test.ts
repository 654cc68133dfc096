import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, cleanEnv } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * `npm run build` (and `prepare`, which `npm install /path/to/lllm` runs) on a copy of the clone: it must never take
 * dist/ away from a CLI that starts or runs meanwhile, and must cost nothing when dist/ is current.
 */

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const DESCRIPTION = "Run LLM agents from declarative YAML/JSON tactic files.";

/** A copy of what the build reads, with the clone's built dist/ and its node_modules (linked). */
function copyOfClone(): string {
  const copy = tempDir("lllm-clone-");
  for (const entry of ["src", "scripts", "schemas", "bin", "dist", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"]) {
    cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true, filter: (source) => !source.includes(`${path.sep}src${path.sep}config${path.sep}generated`) });
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"), "dir");
  return copy;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function digest(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

describe("the build", () => {
  it("skips when dist/ is current, and otherwise swaps a whole new dist/ in: every CLI started or running meanwhile works", async () => {
    const clone = copyOfClone();
    const bin = path.join(clone, "bin", "lllm.js");
    const dist = path.join(clone, "dist");

    // Nothing changed since the clone's own build: `prepare` (what `npm install` of the clone runs) leaves dist/ as it is.
    const before = statSync(dist).ino;
    const skipped = spawnSync("npm", ["run", "prepare"], { cwd: clone, env: cleanEnv(), encoding: "utf8", timeout: 120_000 });
    expect(skipped.status).toBe(0);
    expect(skipped.stderr, "the clone's dist/ must be current: npm run build").toContain("dist/ is up to date with the sources");
    expect(statSync(dist).ino).toBe(before);

    // A changed source: the build runs. Meanwhile a run that has started waits for its model, and new CLIs keep starting.
    const main = path.join(clone, "src", "cli", "main.ts");
    writeFileSync(main, readFileSync(main, "utf8").replace(DESCRIPTION, "Run LLM agents, rebuilt."));
    const previous = JSON.parse(readFileSync(path.join(dist, "build-stamp.json"), "utf8")) as { bundle: string[] };
    // The entries (cli.js, index.js, …) are one-line facades of the hashed files: a running CLI has loaded them already.
    const previousFiles = new Map(previous.bundle.filter((name) => !/^[A-Za-z]+\.c?js$/.test(name)).map((name) => [name, digest(path.join(dist, "bundle", name))]));

    let release: (() => void) | undefined;
    const answered = new Promise<void>((resolve) => (release = resolve));
    let asked: (() => void) | undefined;
    const modelAsked = new Promise<void>((resolve) => (asked = resolve));
    server = await startMockOpenAIServer({
      handler: async () => {
        asked!();
        await answered;
        return { text: "Sunny." };
      },
    });
    writeFileSync(path.join(clone, "t.yaml"), 'name: t\nprompt: "{input}"\nagent_configs:\n  - name: a\n    model_name: gpt-test\n    system_prompt: Be brief.\n');
    // Its model answers once the build is done: a build on a busy machine may take longer than the default timeout.
    const running = run(process.execPath, [bin, "run", "t.yaml", "--input", "hi", "--no-stream", "--timeout", "1200"], clone, cleanEnv({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }));
    await modelAsked;

    let building = true;
    const build = run("npm", ["run", "build"], clone).finally(() => (building = false));
    const starts: Array<{ code: number | null; stdout: string; stderr: string }> = [];
    // A start about every second of the build (tens of them): each costs a tenth of a second of CPU, and started more
    // often they kept a core busy, so that the build and the test files beside it waited, on a 2-core machine.
    while (building) {
      starts.push(await run(process.execPath, [bin, "--help"], clone));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    starts.push(await run(process.execPath, [bin, "--help"], clone));
    const built = await build;
    expect(built.code, built.stderr).toBe(0);
    release!();
    const ran = await running;

    expect(starts.length).toBeGreaterThan(1);
    for (const start of starts) {
      expect(start.stderr).toBe("");
      expect(start.code, start.stderr).toBe(0);
    }
    expect(starts[0]!.stdout).toContain(DESCRIPTION);
    expect(starts.at(-1)!.stdout).toContain("Run LLM agents, rebuilt.");
    expect(ran, ran.stderr).toMatchObject({ code: 0, stdout: "Sunny.\n" });
    // A CLI still running the previous build finds each of its files, unchanged, for its lazy imports.
    for (const [name, hash] of previousFiles) expect(digest(path.join(dist, "bundle", name)), name).toBe(hash);
    // Built elsewhere and renamed: no file names the folder it was built in.
    for (const name of readdirSync(path.join(dist, "bundle"))) expect(readFileSync(path.join(dist, "bundle", name), "utf8").includes("dist.tmp-"), name).toBe(false);
    // Nothing is left beside dist/.
    expect(readdirSync(clone).filter((name) => name.startsWith("dist."))).toEqual([]);
    expect(existsSync(path.join(clone, "src", "config", "generated", "validators", "tactic.cjs"))).toBe(true);
  }, 1_200_000);
});
