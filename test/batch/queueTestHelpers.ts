import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe } from "vitest";
import type { MockOpenAIServer, MockOpenAIServerOptions } from "../../src/testing/index.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { echoSetup, readResults, removeTempDirs, spawnBatch, tempDir } from "./batchTestHelpers.js";
import { hasRedis, RedisServer } from "../helpers/redisServer.js";

// Skips only where redis-server is missing locally; in CI (CI=true) it is installed and the tests must run.
export const describeRedis = hasRedis || process.env.CI === "true" ? describe : describe.skip;

/**
 * Short heartbeats for tests: producers and workers renew theirs every 100 ms (one silent for 5 s is gone). Each test
 * adds the durations it is about.
 */
export const QUICK = { LLLM_QUEUE_HEARTBEAT_MS: "100" };

/**
 * A short lock, for a test about a killed worker: its items are taken back 2 s after its last renewal. Only there: a
 * live worker whose event loop a busy machine holds up for a second or two (loading a tool's module) would lose its
 * lock too, and its item would run twice.
 */
export const SHORT_LOCK = { LLLM_QUEUE_LOCK_MS: "2000" };

/** What a test started; stopped after each test (registered by `trackQueueTests`). */
const started: { servers: MockOpenAIServer[]; redises: RedisServer[]; children: ChildProcess[] } = { servers: [], redises: [], children: [] };

export function trackQueueTests(): void {
  afterEach(async () => {
    for (const child of started.children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    started.children = [];
    await Promise.all(started.redises.map((redis) => redis.stop()));
    started.redises = [];
    await Promise.all(started.servers.map((server) => server.close()));
    started.servers = [];
    removeTempDirs();
  });
}

export async function startRedis(options: { password?: string } = {}): Promise<RedisServer> {
  const redis = await RedisServer.start(options);
  started.redises.push(redis);
  return redis;
}

export interface CliChild {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** `lllm worker` as a child this test can signal; `cwd` defaults to the repository, `packages` are its `-p`. */
export function startWorker(url: string, env: NodeJS.ProcessEnv, options: { concurrency?: number; packages?: string[]; cwd?: string; log?: boolean; args?: string[] } = {}): CliChild {
  const args = ["worker", "--queue", url, "--concurrency", String(options.concurrency ?? 4), ...(options.packages ?? []).flatMap((dir) => ["-p", dir]), ...(options.log ? [] : ["--no-log"]), ...(options.args ?? [])];
  return track(spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] }));
}

/** `lllm batch …` as a child this test can signal. */
export function startBatch(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): CliChild {
  if (options.cwd === undefined) {
    const batch = spawnBatch(args, childEnv(env));
    started.children.push(batch.child);
    let stdout = "";
    batch.child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    return { child: batch.child, stderr: batch.stderr, stdout: () => stdout, exited: batch.done.then((result) => result.code) };
  }
  return track(spawn(process.execPath, [BIN, "batch", ...args], { cwd: options.cwd, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] }));
}

function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // TMPDIR: the test run's own (a worker writes a tactic sent as data there), removed after the suite.
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, NO_COLOR: "1", ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}), ...env };
}

function track(child: ChildProcess): CliChild {
  started.children.push(child);
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stderr: () => stderr, stdout: () => stdout, exited };
}

/**
 * The echo tactic inside a package `kit` (`kit/tactics/echo.yaml`, listing its own package): a queued batch names it
 * by ref, and a worker runs it only with a copy of `kit` among its own packages (`-p`).
 */
export async function kitSetup(options: { delayMs?: number; server?: MockOpenAIServerOptions } = {}): Promise<{ server: MockOpenAIServer; dir: string; kit: string; tactic: string; answered: () => number; env: NodeJS.ProcessEnv }> {
  const setup = await echoSetup(options);
  started.servers.push(setup.server);
  const kit = path.join(setup.dir, "kit");
  const tactic = path.join(kit, "tactics", "echo.yaml");
  cpSync(setup.tactic, tactic);
  writeFileSync(tactic, `${readFileSync(tactic, "utf8")}packages: [..]\n`);
  writeFileSync(path.join(kit, "lllm.toml"), '[package]\nname = "kit"\nversion = "1.0.0"\n');
  return { server: setup.server, dir: setup.dir, kit, tactic, answered: setup.answered, env: setup.env };
}

/** A copy of a package in a fresh folder elsewhere (another machine's copy, as far as lllm can tell). */
export function copyPackage(dir: string): string {
  const copy = path.join(tempDir("lllm-other-machine-"), path.basename(dir));
  cpSync(dir, copy, { recursive: true });
  return copy;
}

export function itemsFile(dir: string, count: number): string {
  const file = path.join(dir, "items.txt");
  writeFileSync(file, Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n"));
  return file;
}

export function expectedIds(count: number): string[] {
  return Array.from({ length: count }, (_, index) => String(index + 1));
}

/** The ids of the `ok` lines of an output file, sorted as numbers. */
export function okIds(out: string): string[] {
  return readResults(out)
    .filter((line) => line.status === "ok")
    .map((line) => line.id)
    .sort((a, b) => Number(a) - Number(b));
}

/** Resolve once `check` holds (it may ask Redis), polling: for a condition only another process can make true. */
export async function eventually(check: () => boolean | Promise<boolean>, options: { timeoutMs?: number; state?: () => unknown } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting${options.state ? `; state: ${JSON.stringify(await options.state())}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
