import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { freePort } from "../helpers/freePort.js";
import { tempTree } from "../helpers/tempTree.js";
import { batch, tempDir } from "./batchTestHelpers.js";
import { copyPackage, describeRedis, eventually, expectedIds, itemsFile, kitSetup, okIds, QUICK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

describeRedis("a queued batch names its tactic so that workers elsewhere find their own copy", () => {
  it("a worker in another folder without the tactic's package refuses the batch, which fails at once with the worker's reason and how to start it", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const worker = startWorker(redis.url, env, { cwd: tempDir() });
    await eventually(() => worker.stderr().includes("waiting for batches"));
    // Named by a path relative to the submitting folder, as a user does.
    const producer = startBatch(["kit/tactics/echo.yaml", "--inputs", itemsFile(setup.dir, 30), "--lines", "--queue", redis.url, "--no-log"], env, { cwd: setup.dir });
    expect(await producer.exited).toBe(1);
    const stderr = producer.stderr();
    expect(stderr).toMatch(/every worker on redis:\/\/127\.0\.0\.1:\d+ refuses this batch/);
    expect(stderr).toContain("this worker has no package `kit` (the batch runs `kit.tactics:echo`)");
    expect(stderr).toContain("Start the worker with a copy of `kit` 1.0.0: lllm worker --queue URL -p DIR (DIR: the package's folder, with its manifest)");
    // The folder of the machine that runs the batch means nothing to a worker elsewhere: it is never named.
    expect(stderr).not.toContain(setup.kit);
    expect(worker.stderr()).not.toContain(setup.kit);
    expect(stderr).toMatch(/lllm batch: 0 ok, 0 failed, \d+ cancelled/);
    // The worker's line comes through its own pipe, which the batch's exit does not wait for.
    await eventually(() => worker.stderr().includes("refused: this worker has no package `kit`"), { state: () => worker.stderr() });
    expect(setup.answered()).toBe(0);
    // The failed batch removed its keys; only the live worker's heartbeat is left. Waited for: a worker whose round
    // read the batch's name just before the producer removed it finds the producer gone and removes the batch too,
    // under a short-lived `…:removing` key of its own (seen once on a busy machine).
    const client = redis.client();
    const others = async (): Promise<string[]> => (await client.keys("*")).filter((key) => !key.startsWith("lllm:worker:"));
    await eventually(async () => (await others()).length === 0, { state: others });
    expect(await others()).toEqual([]);
  }, 120_000);

  it("a worker in another folder with its own copy of the package (another path) runs the batch", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    startWorker(redis.url, env, { cwd: tempDir(), packages: [copyPackage(setup.kit)] });
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch(["kit/tactics/echo.yaml", "--inputs", itemsFile(setup.dir, 5), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env, { cwd: setup.dir });
    expect(await producer.exited).toBe(0);
    expect(okIds(out)).toEqual(expectedIds(5));
  }, 120_000);

  it("a tactic in no package is sent as data: a worker that has its packages (by name) runs it, one that lacks them says which", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    // The model's address comes from the worker's own environment: a tactic sent as data may not choose it.
    const env = { ...setup.env, ...QUICK, OPENAI_BASE_URL: setup.server.url, OPENAI_API_KEY: "sk-mock-worker" };
    const project = path.join(setup.dir, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "common.yaml"), "global:\n  model_name: gpt-4o-mini\n");
    writeFileSync(path.join(project, "ask.yaml"), "name: ask\nbase: ./common.yaml\npackages: [../kit]\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n");
    const lacking = startWorker(redis.url, env, { cwd: tempDir() });
    await eventually(() => lacking.stderr().includes("waiting for batches"));
    const refused = startBatch(["project/ask.yaml", "--inputs", itemsFile(setup.dir, 3), "--lines", "--queue", redis.url, "--no-log"], env, { cwd: setup.dir });
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toContain("its tactic uses package this worker does not have: `kit`");
    lacking.child.kill("SIGINT");
    expect(await lacking.exited).toBe(130);

    startWorker(redis.url, env, { cwd: tempDir(), packages: [copyPackage(setup.kit)] });
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch(["project/ask.yaml", "--inputs", itemsFile(setup.dir, 3), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env, { cwd: setup.dir });
    expect(await producer.exited).toBe(0);
    expect(okIds(out)).toEqual(expectedIds(3));
  }, 120_000);

  it("a worker that cannot load the tactic names the files from their packages, never by its own folders", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK, OPENAI_BASE_URL: setup.server.url, OPENAI_API_KEY: "sk-mock-worker" };
    // The batch's tactic (sent as data) uses kit's `shout` tool; the worker's copy of kit lacks the tool's file.
    mkdirSync(path.join(setup.kit, "tools"));
    writeFileSync(path.join(setup.kit, "tools", "shout.mjs"), 'export const shout = { name: "shout", description: "Shouts.", parameters: { type: "object", properties: {} }, run: () => "HEY" };\n');
    const theirs = copyPackage(setup.kit);
    rmSync(path.join(theirs, "tools", "shout.mjs"));
    mkdirSync(path.join(setup.dir, "project"));
    writeFileSync(path.join(setup.dir, "project", "ask.yaml"), "name: ask\npackages: [../kit]\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    system_prompt: Answer.\n    tools: [kit.tools:shout]\n");
    const worker = startWorker(redis.url, env, { cwd: tempDir(), packages: [theirs] });
    await eventually(() => worker.stderr().includes("waiting for batches"));
    const producer = startBatch(["project/ask.yaml", "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", redis.url, "--no-log"], env, { cwd: setup.dir });
    expect(await producer.exited).toBe(1);
    const stderr = producer.stderr();
    // The file the worker wrote for the tactic is named as the batch names it, without that file's line and column.
    expect(stderr).toContain("this worker cannot load the tactic `project/ask.yaml`: project/ask.yaml: tool `kit.tools:shout` not found in package `kit` (kit)");
    // Neither the worker's copy of the package nor the file it wrote for the tactic is named by its folder.
    expect(stderr).not.toContain(theirs);
    expect(stderr).not.toContain("lllm-worker-");
    expect(stderr).not.toContain(tmpdir());
  }, 120_000);
});

describeRedis("a worker loads code only from its own packages, whatever Redis says", () => {
  it("announcements naming a package folder, a base file or an unknown package are refused before anything is loaded; no digest is written back", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    // A package whose tool writes a file the moment it is imported.
    const evil = tempTree({
      "lllm.toml": '[package]\nname = "evil"\n',
      "tools/boom.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("../imported.txt", import.meta.url), "imported");\nexport const boom = { name: "boom", description: "x", parameters: {}, run: () => "x" };\n',
      "tactics/t.yaml": "name: t\npackages: [..]\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    system_prompt: A.\n    tools: [evil.tools:boom]\n",
    });
    const common = { tactic: "evil.tactics:t", model: null, digest: "0123456789abcdef", vars: {}, maxSteps: null, timeout: null, approve: "all", producer: { host: "elsewhere", pid: 1 }, out: null };
    const agent = { name: "bot", model_name: "gpt-4o-mini", system_prompt: "A.", tools: ["evil.tools:boom"] };
    const announcements: Record<string, Record<string, unknown>> = {
      // As an older lllm announced a batch: the producer's tactic file and package folders.
      old: { ...common, tacticFile: path.join(evil, "tactics", "t.yaml"), packages: [evil] },
      ref: { ...common, queued: { kind: "ref", ref: "evil.tactics:t", contentDigest: "x" }, packages: [{ name: "evil", version: null }] },
      data: { ...common, queued: { kind: "data", file: "t.yaml", data: { name: "t", packages: [evil], agent_configs: [agent] }, packageNames: [] }, packages: [] },
      base: { ...common, queued: { kind: "data", file: "t.yaml", data: { name: "t", base: path.join(evil, "tactics", "t.yaml"), agent_configs: [agent] }, packageNames: [] }, packages: [] },
      // The worker's own tactic, byte for byte, but another resolved configuration than the batch says.
      differs: { ...common, tactic: "kit.tactics:echo", queued: { kind: "ref", ref: "kit.tactics:echo", contentDigest: createHash("sha256").update(readFileSync(setup.tactic)).digest("hex") }, packages: [{ name: "kit", version: "1.0.0" }] },
    };
    const client = redis.client();
    for (const [batchId, announcement] of Object.entries(announcements)) {
      await client.set(`lllm:batch:${batchId}:alive`, "1", "PX", 120_000);
      await client.hset(`lllm:batch:${batchId}`, "announcement", JSON.stringify({ batchId, ...announcement }));
      await client.sadd("lllm:batches", batchId);
    }
    const worker = startWorker(redis.url, { ...setup.env, ...QUICK }, { cwd: tempDir(), packages: [copyPackage(setup.kit)] });
    const refusal = async (batchId: string): Promise<string | undefined> => Object.entries(await client.hgetall(`lllm:batch:${batchId}`)).find(([field]) => field.startsWith("refused:"))?.[1];
    await eventually(async () => (await Promise.all(Object.keys(announcements).map(refusal))).every((text) => text !== undefined));
    expect(existsSync(path.join(evil, "imported.txt"))).toBe(false);
    expect(await refusal("old")).toContain("its announcement is not one this worker understands");
    expect(await refusal("ref")).toContain("this worker has no package `evil`");
    expect(await refusal("data")).toContain("no package named `evil`");
    expect(await refusal("base")).toContain("names a `base` file");
    // Neither digest is written back: the worker's own would tell anyone who can write to Redis what to announce.
    expect(await refusal("differs")).toContain("differs from this worker's copy (its configuration, prompts or packages)");
    for (const batchId of Object.keys(announcements)) expect(await refusal(batchId)).not.toMatch(/[0-9a-f]{16}/);
    expect(worker.stderr()).not.toContain("joined batch");
  }, 120_000);
});

it("--model scripted:FILE with --queue is refused at submission (exit 2), before connecting, whatever names the tactic", async () => {
  const setup = await kitSetup();
  const turns = path.join(setup.dir, "turns.yaml");
  writeFileSync(turns, "- text: scripted answer\n");
  // The tactic in a package goes by ref; outside a package, as data: either way a worker would read its own file.
  for (const tactic of [setup.tactic, path.join(setup.dir, "echo.yaml")]) {
    const result = await batch([tactic, "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", `redis://127.0.0.1:${await freePort()}`, "--model", `scripted:${turns}`, "--no-log"], { ...setup.env, LLLM_QUEUE_RECONNECT_MS: "0" });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`the workers cannot run this batch as it is: \`--model scripted:${turns}\` names a file of this machine, and a worker takes no file from a batch`);
    expect(result.stderr).not.toContain("Redis");
  }
}, 60_000);

it("a tactic in no package that would choose where a worker sends its keys is refused at submission, with the fix, before connecting", async () => {
  const setup = await kitSetup();
  const loose = path.join(setup.dir, "loose.yaml");
  // The echo tactic's own text, outside its package: it sets invoker_config (base_url, api_key_env).
  writeFileSync(loose, `name: loose\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "http://127.0.0.1:9/v1", api_key_env: MOCK_KEY}\n  mcp_servers: [{name: local, command: ./serve.sh}]\nagent_configs:\n  - name: bot\n    system_prompt: Answer.\n`);
  const result = await batch([loose, "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", `redis://127.0.0.1:${await freePort()}`, "--no-log"], setup.env);
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toContain("the workers cannot run this tactic as it is: it is not in a package");
  expect(result.stderr).toContain("global.invoker_config (would choose where the worker sends its API keys)");
  expect(result.stderr).toContain("global.mcp_servers[0].command (starts `./serve.sh` on the worker)");
  expect(result.stderr).toContain("lllm worker --queue URL -p DIR");
  expect(result.stderr).not.toContain("Redis");
  expect(existsSync(path.join(setup.dir, "serve.sh"))).toBe(false);
}, 60_000);
