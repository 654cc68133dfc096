import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { FunctionCall } from "../../src/tools/index.js";
import { RunRecorder } from "../../src/store/RunRecorder.js";
import { RunSpool } from "../../src/store/RunSpool.js";
import { RunStore } from "../../src/store/RunStore.js";
import { RunTally } from "../../src/store/RunTally.js";
import { redactorOf } from "../../src/util/redact.js";
import { echoSetup, readResults, spawnBatch, wholeLines } from "../batch/batchTestHelpers.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { cli, listRuns } from "./storeTestHelpers.js";

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  removeTempDirs();
});

function recorderOptions(file: string, warnings: string[] = []) {
  return {
    file,
    tally: new RunTally(PriceTable.load()),
    redactor: redactorOf([]),
    warn: (message: string) => warnings.push(message),
    run: { tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input: "hi", vars: {}, models: ["m"], lllmVersion: "0" },
  };
}

function read<T>(file: string, action: (store: RunStore) => T): T {
  const store = RunStore.openSync(file);
  try {
    return action(store);
  } finally {
    store.close();
  }
}

const spoolOf = (home: string): string[] => (existsSync(path.join(home, "logs.spool")) ? readdirSync(path.join(home, "logs.spool")) : []);

describe("runs are recorded into the spool and merged into logs.db by readers", () => {
  it("the run's start is on disk a moment later, without the database; each reader merges what is new", async () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const recorder = RunRecorder.begin(recorderOptions(file));
    expect(recorder.failed).toBe(false);
    // Recording makes no database: a line in the process's spool file, written within a moment.
    expect(await waitUntil(() => spoolOf(home).length > 0)).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(spoolOf(home)).toEqual([expect.stringMatching(new RegExp(`^[0-9A-Z]{26}-${process.pid}\\.jsonl$`))]);
    expect(read(file, (store) => store.getRun(recorder.id)?.status)).toBe("running");

    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: [], model: "m", sent: [{ role: "user", content: "hi" }] });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "hello", toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } });
    recorder.finish({ output: "hello" });
    const run = read(file, (store) => store.getRun(recorder.id));
    expect(run).toMatchObject({ status: "ok", output: "hello", model_calls: [{ reply: "hello", messages: [{ role: "user", content: "hi" }] }] });
    // Merged twice, stored once.
    expect(read(file, (store) => store.listRuns({ search: "hello" }))).toHaveLength(1);

    // The writer still holds its file (this process); once it closes it, the next reader deletes it.
    expect(spoolOf(home)).toHaveLength(1);
    RunSpool.of(file).close();
    read(file, (store) => store.listRuns());
    expect(spoolOf(home)).toEqual([]);
    expect(read(file, (store) => store.listRuns().map((entry) => entry.id))).toEqual([recorder.id]);
  });

  it("a spool file of a newer lllm is left alone; a dead writer's torn last line is dropped with its file", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const folder = path.join(home, "logs.spool");
    RunRecorder.begin(recorderOptions(file)); // makes the folder
    RunSpool.of(file).close();
    const newer = path.join(folder, `01J0000000000000000000000A-1.jsonl`);
    writeFileSync(newer, `${JSON.stringify({ spool: 99, pid: 1, host: "elsewhere" })}\n{"something":"new"}\n`);
    // A process that has ended: its pid is free.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const pid = Number(dead.stdout);
    const torn = path.join(folder, `01J0000000000000000000000B-${pid}.jsonl`);
    const begin = { begin: { id: "01J0000000000000000000000C", startedAt: 1, tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input: "killed", vars: {}, models: [], lllmVersion: "0" } };
    writeFileSync(torn, `${JSON.stringify({ spool: 1, pid, host: hostname() })}\n${JSON.stringify(begin)}\n{"calls":{"run":"01J0000000000000000000000C","mod`);

    const runs = read(file, (store) => store.listRuns());
    expect(runs.map((run) => [run.input, run.status])).toEqual([
      ["hi", "running"],
      ["killed", "crashed"],
    ]);
    expect(existsSync(newer)).toBe(true);
    expect(existsSync(torn)).toBe(false);
  });
});

describe("a process that records into many homes (a library caller, a test worker)", () => {
  it("adds one exit hook for all of them, so twelve homes raise no MaxListenersExceededWarning", () => {
    const before = process.listenerCount("exit");
    const spools = Array.from({ length: 12 }, () => RunSpool.of(path.join(tempDir("lllm-spool-homes-"), "logs.db")));
    for (const spool of spools) spool.append({ close: true }, { now: false });
    // One hook at most: an earlier test of this worker may have added it already.
    expect(process.listenerCount("exit") - before).toBeLessThanOrEqual(1);
    for (const spool of spools) spool.close();
  });
});

describe("a tool call's arguments are redacted once for its answer and the next call's dialog", () => {
  it("but a key learnt in between is removed from the dialog all the same", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const redactor = redactorOf([]);
    const recorder = RunRecorder.begin({ ...recorderOptions(file), redactor });
    const learnt = "sk-learnt-later-0123456789";
    const toolCalls = [{ id: "c1", name: "read", arguments: `{"page":1,"key":"${learnt}"}` }, { id: "c2", name: "read", arguments: '{"page":2}' }];
    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["read"], model: "m", sent: [{ role: "user", content: "hi" }] });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls, usage: { promptTokens: 1, completionTokens: 1 } });
    // The key becomes known (a proxy reads it) after the answer was recorded, before the next call's dialog is.
    redactor.add(learnt);
    const dialog = [
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: null, toolCalls },
      { role: "tool" as const, content: "page one", toolCallId: "c1", name: "read" },
      { role: "tool" as const, content: "page two", toolCallId: "c2", name: "read" },
    ];
    recorder.onEvent({ type: "model_call", agent: "bot", round: 1, messages: 4, tools: ["read"], model: "m", sent: dialog });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 1, model: "m", text: "Read.", toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } });
    recorder.finish({ output: "Read." });
    const [spoolFile] = spoolOf(home);
    const lines = readFileSync(path.join(home, "logs.spool", spoolFile!), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { calls?: { model: Array<{ record: { messages: Array<{ toolCalls?: Array<{ arguments: string }> }> } }> } });
    const calls = lines.flatMap((line) => line.calls?.model ?? []);
    expect(calls).toHaveLength(2);
    // The first answer was written before the key was known; the second call's dialog holds the calls redacted.
    const asked = calls[1]!.record.messages.find((message) => message.toolCalls)!.toolCalls!;
    expect(asked.map((call) => call.arguments)).toEqual(['{"page":1,"key":"[redacted]"}', '{"page":2}']);
  });
});

describe("a tool result is written to the spool once, and read back whole", () => {
  it("the outcome and the next model call refer to the tool's row; the store holds the text in each place, and a resume's journal has it", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const secret = "sk-page-key-0123456789";
    const recorder = RunRecorder.begin({ ...recorderOptions(file), redactor: redactorOf([secret]), journaled: true });
    const result = `${"a long page of text, ".repeat(200)}key ${secret} THE-END`;
    const resultStr = `Return of calling function read with arguments {'page': 1}:\n---\n${result}\n---`;
    const toolCalls = [{ id: "c1", name: "read", arguments: '{"page":1}' }];
    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["read"], model: "m", sent: [{ role: "user", content: "hi" }] });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls, usage: { promptTokens: 1, completionTokens: 1 } });
    const call = new FunctionCall({ id: "c1", name: "read", arguments: { page: 1 } });
    recorder.toolStarted({ key: '["bot","c1",1]', agent: "bot", name: "read", arguments: call.arguments });
    call.result = result;
    call.resultStr = resultStr;
    recorder.toolEnded('["bot","c1",1]', { resultStr, result }, { agent: "bot", call, durationMs: 3 });
    const dialog = [
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: null, toolCalls },
      { role: "tool" as const, content: resultStr, toolCallId: "c1", name: "read" },
    ];
    recorder.onEvent({ type: "model_call", agent: "bot", round: 1, messages: 3, tools: ["read"], model: "m", sent: dialog });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 1, model: "m", text: "It ends.", toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } });

    // An object result is kept as it is; its text is the row's.
    const counted = new FunctionCall({ id: "c2", name: "count", arguments: {} });
    counted.result = { pages: 2, last: "THE-COUNT" };
    counted.resultStr = `Return of calling function count with arguments {}:\n---\n{"pages":2,"last":"THE-COUNT"}\n---`;
    recorder.toolStarted({ key: '["bot","c2",1]', agent: "bot", name: "count", arguments: {} });
    recorder.toolEnded('["bot","c2",1]', { resultStr: counted.resultStr, result: counted.result }, { agent: "bot", call: counted, durationMs: 1 });
    recorder.finish({ output: "It ends." });

    // On disk once: in the tool's row; not in the journal's outcome (its text, nor the string result that text holds),
    // nor in the next model call's messages.
    const [spoolFile] = spoolOf(home);
    const lines = readFileSync(path.join(home, "logs.spool", spoolFile!), "utf8");
    expect(lines.split("THE-END").length - 1).toBe(1);
    expect(lines).not.toContain(secret);
    expect(lines.split("THE-COUNT").length - 1).toBe(2);

    const redacted = (text: string): string => text.replace(secret, "[redacted]");
    const run = read(file, (store) => store.getRun(recorder.id));
    expect(run?.tool_calls).toMatchObject([{ call_id: "c1", result: redacted(resultStr) }, { call_id: "c2", result: counted.resultStr }]);
    expect(run?.model_calls[1]?.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, toolCalls },
      { role: "tool", content: redacted(resultStr), toolCallId: "c1", name: "read" },
    ]);
    const journal = read(file, (store) => store.getJournal(recorder.id));
    expect(journal!.tools.map((entry) => entry.outcome)).toEqual([JSON.stringify({ resultStr: redacted(resultStr), result: redacted(result) }), JSON.stringify({ resultStr: counted.resultStr, result: counted.result })]);
  });
});

describe("a model call's tool message is read back with its own call's result", () => {
  const call = (id: string, text: string): FunctionCall => {
    const made = new FunctionCall({ id, name: "read", arguments: { page: id } });
    made.result = text;
    made.resultStr = `Return of calling function read with arguments {'page': '${id}'}:\n---\n${text}\n---`;
    return made;
  };
  const askFor = [{ id: "a", name: "read", arguments: '{"page":"a"}' }, { id: "b", name: "read", arguments: '{"page":"b"}' }];
  const usage = { promptTokens: 1, completionTokens: 1 };

  it("in a run recorded again under its first attempt's id, whose calls end in another order", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const [a, b] = [call("a", "PAGE A"), call("b", "PAGE B")];
    // The first attempt (a batch item whose next model call waits for a provider batch job): b ends before a.
    const first = RunRecorder.begin(recorderOptions(file));
    first.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["read"], model: "m", sent: [{ role: "user", content: "hi" }] });
    first.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls: askFor, usage });
    for (const ended of [b, a]) first.onEvent({ type: "tool_call", agent: "bot", call: ended, durationMs: 1, repeated: false });
    RunSpool.of(file).flush();
    // The item run again from its start under that id: a ends first this time, and the next model call is recorded.
    const again = RunRecorder.begin({ ...recorderOptions(file), id: first.id });
    again.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["read"], model: "m", sent: [{ role: "user", content: "hi" }] });
    again.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls: askFor, usage });
    for (const ended of [a, b]) again.onEvent({ type: "tool_call", agent: "bot", call: ended, durationMs: 1, repeated: false });
    const dialog = [
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: null, toolCalls: askFor },
      { role: "tool" as const, content: a.resultStr!, toolCallId: "a", name: "read" },
      { role: "tool" as const, content: b.resultStr!, toolCallId: "b", name: "read" },
    ];
    again.onEvent({ type: "model_call", agent: "bot", round: 1, messages: 4, tools: ["read"], model: "m", sent: dialog });
    again.onEvent({ type: "model_reply", agent: "bot", round: 1, model: "m", text: "Both read.", toolCalls: [], usage });
    again.finish({ output: "Both read." });

    const run = read(file, (store) => store.getRun(first.id));
    expect(run?.model_calls[1]?.messages.slice(2)).toEqual([
      { role: "tool", content: a.resultStr, toolCallId: "a", name: "read" },
      { role: "tool", content: b.resultStr, toolCallId: "b", name: "read" },
    ]);
  });

  it("when the write that held the tool's row failed", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const a = call("a", "PAGE A");
    const recorder = RunRecorder.begin(recorderOptions(file));
    recorder.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["read"], model: "m", sent: [{ role: "user", content: "hi" }] });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls: [askFor[0]!], usage });
    const spool = RunSpool.of(file);
    spool.flush();
    recorder.onEvent({ type: "tool_call", agent: "bot", call: a, durationMs: 1, repeated: false });
    // The spool's timed write of the tool's row fails (a full disk for a moment); the run goes on.
    const write = vi.spyOn(fs, "writeSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    syncBuiltinESMExports();
    try {
      expect(() => spool.flush()).toThrow(/ENOSPC/);
    } finally {
      write.mockRestore();
      syncBuiltinESMExports();
    }
    const dialog = [
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: null, toolCalls: [askFor[0]!] },
      { role: "tool" as const, content: a.resultStr!, toolCallId: "a", name: "read" },
    ];
    recorder.onEvent({ type: "model_call", agent: "bot", round: 1, messages: 3, tools: ["read"], model: "m", sent: dialog });
    recorder.onEvent({ type: "model_reply", agent: "bot", round: 1, model: "m", text: "Read.", toolCalls: [], usage });
    recorder.finish({ output: "Read." });

    const run = read(file, (store) => store.getRun(recorder.id));
    expect(run?.tool_calls).toEqual([]);
    expect(run?.model_calls[1]?.messages[2]).toEqual({ role: "tool", content: a.resultStr, toolCallId: "a", name: "read" });
  });
});

describe("a resumed attempt", () => {
  it("records the calls of a replayed answer that the journal does not answer (a refused one) once, not again", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    const usage = { promptTokens: 1, completionTokens: 1 };
    const askFor = [{ id: "c1", name: "wipe", arguments: "{}" }];
    const refused = (): FunctionCall => Object.assign(new FunctionCall({ id: "c1", name: "wipe", arguments: {} }), { error: "refused", resultStr: "Error: the user refused this call" });
    const first = RunRecorder.begin({ ...recorderOptions(file), journaled: true });
    first.onEvent({ type: "model_call", agent: "bot", round: 0, messages: 1, tools: ["wipe"], model: "m", sent: [{ role: "user", content: "hi" }] });
    first.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls: askFor, usage });
    first.onEvent({ type: "tool_call", agent: "bot", call: refused(), durationMs: 0, repeated: false, refused: true });
    // Killed here. The resume replays the answer, and the loop refuses the call again, as it did.
    const replayedUsage = { ...usage };
    const again = RunRecorder.begin({
      ...recorderOptions(file),
      journaled: true,
      id: first.id,
      resume: { attempt: 2, from: { modelSeq: 1, toolSeq: 1, step: 2 }, replayed: { reply: (value) => value === replayedUsage, call: () => false }, earlierMs: 0, earlier: { llmCalls: 1, usage: { promptTokens: 1, cachedPromptTokens: 0, completionTokens: 1, reasoningTokens: 0 }, cost: null } },
    });
    again.onEvent({ type: "model_reply", agent: "bot", round: 0, model: "m", text: "", toolCalls: askFor, usage: replayedUsage });
    again.onEvent({ type: "tool_call", agent: "bot", call: refused(), durationMs: 0, repeated: false, refused: true });
    again.onEvent({ type: "model_call", agent: "bot", round: 1, messages: 3, tools: ["wipe"], model: "m", sent: [{ role: "user", content: "hi" }] });
    // A live answer's refused call is recorded as ever.
    again.onEvent({ type: "model_reply", agent: "bot", round: 1, model: "m", text: "", toolCalls: [{ ...askFor[0]!, id: "c2" }], usage });
    again.onEvent({ type: "tool_call", agent: "bot", call: Object.assign(refused(), { id: "c2" }), durationMs: 0, repeated: false, refused: true });
    again.finish({ output: "Not wiped." });
    const run = read(file, (store) => store.getRun(first.id));
    expect(run?.tool_calls.map((call) => [call.call_id, call.status])).toEqual([
      ["c1", "refused"],
      ["c2", "refused"],
    ]);
    // What the run spent: the first attempt's answer once (replayed, not counted again), and the live one.
    expect([run?.llm_calls, run?.prompt_tokens]).toEqual([2, 2]);
  });
});

describe("an outcome that is not JSON", () => {
  it("is kept as written, and the lines after it are merged", () => {
    const home = tempDir();
    const file = path.join(home, "logs.db");
    RunRecorder.begin(recorderOptions(file)); // makes the folder
    RunSpool.of(file).close();
    const id = "01J0000000000000000000000D";
    const row = { seq: 0, step: 0, agent: "bot", call_id: "c1", name: "read", arguments: {}, result: "Return of calling function read with arguments {}:\n---\nx\n---", status: "ok", error: null, duration_ms: 1, ended_at: 2 };
    const lines = [
      { spool: 3, pid: process.pid, host: hostname() },
      { begin: { id, startedAt: 1, tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input: "broken", vars: {}, models: [], lllmVersion: "0" } },
      { start: { run: id, key: "k", agent: "bot", name: "read", arguments: {}, at: 1 } },
      // A redaction that cut into an escape leaves text that is not JSON.
      { outcome: { run: id, key: "k", outcome: '{"result":"ab\\', at: 2, row, resultInRow: true } },
      { finish: { run: id, end: { endedAt: 3, status: "ok", exitCode: 0, errorCode: null, errorMessage: null, output: null, details: null, models: [], llmCalls: 0, cost: 0, durationMs: 2, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, reasoningTokens: 0 } } },
      { close: true },
    ];
    writeFileSync(path.join(home, "logs.spool", `01J0000000000000000000000E-${process.pid}.jsonl`), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    expect(read(file, (store) => store.getRun(id)?.status)).toBe("ok");
    expect(read(file, (store) => store.getJournal(id)?.tools.map((entry) => entry.outcome))).toEqual(['{"result":"ab\\']);
  });
});

describe("a spool line whose values have the wrong types", { timeout: 120_000 }, () => {
  it("is dropped with a warning naming it, and the lines around it are merged: lllm logs never aborts", async () => {
    const home = tempDir();
    const folder = path.join(home, "logs.spool");
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const begin = (id: string, input: unknown) => ({ begin: { id, startedAt: 1, tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input, vars: {}, models: [], lllmVersion: "0" } });
    const end = { endedAt: 3, status: "ok", exitCode: 0, errorCode: null, errorMessage: null, output: null, details: null, models: [], llmCalls: 0, cost: 0, durationMs: 2, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, reasoningTokens: 0 };
    const [good, bad, other] = ["01J0000000000000000000000H", "01J0000000000000000000000J", "01J0000000000000000000000K"];
    const lines = [
      { spool: 3, pid: process.pid, host: hostname() },
      begin(good, "fine"),
      // A boolean where a text belongs made libsql abort the process (a panic in its binding, exit 134).
      begin(bad, true),
      begin(other, "also fine"),
      // An object where a number belongs, and a line without the part it needs.
      { start: { run: other, key: "k", agent: "bot", name: "read", arguments: {}, at: { when: 1 } } },
      { resume: { run: other, attempt: 2, startedAt: 4 } },
      { finish: { run: good, end } },
      { finish: { run: other, end } },
      { close: true },
    ];
    const spool = path.join(folder, `01J0000000000000000000000L-${process.pid}.jsonl`);
    writeFileSync(spool, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    const result = await cli(home, ["logs", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const runs = (JSON.parse(result.stdout) as { runs: Array<{ id: string; input: string; status: string }> }).runs;
    expect(runs.map((run) => [run.id, run.input, run.status]).sort()).toEqual([
      [good, "fine", "ok"],
      [other, "also fine", "ok"],
    ]);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("dropped"));
    expect(warnings, result.stderr).toHaveLength(3);
    expect(warnings[0]).toContain(`01J0000000000000000000000L-${process.pid}.jsonl, line 3 (a \`begin\` line): a boolean where a text, a number or null belongs`);
    expect(warnings[1]).toContain("line 5 (a `start` line): an object where a text, a number or null belongs");
    expect(warnings[2]).toContain("line 6 (a `resume` line):");
    // Merged to its end, its writer done: the file is gone, and the next reader says nothing more.
    expect(existsSync(spool)).toBe(false);
    const again = await cli(home, ["logs", "--json"]);
    expect(again.stderr).toBe("");
  });

  it("names the first ten of many, and counts the rest", async () => {
    const home = tempDir();
    const folder = path.join(home, "logs.spool");
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const bad = Array.from({ length: 15 }, (_, n) => ({ begin: { id: `01J00000000000000000000${String(n).padStart(3, "0")}`, startedAt: 1, tacticPath: "t.yaml", tacticName: "t", configDigest: "d", input: true, vars: {}, models: [], lllmVersion: "0" } }));
    const lines = [{ spool: 3, pid: process.pid, host: hostname() }, ...bad, { close: true }];
    writeFileSync(path.join(folder, `01J0000000000000000000000M-${process.pid}.jsonl`), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    const result = await cli(home, ["logs", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("dropped"));
    expect(warnings, result.stderr).toHaveLength(11);
    expect(warnings[9]).toContain("line 11 (a `begin` line)");
    expect(warnings[10]).toContain("5 more lines like these");
  });
});

describe("recording never loads SQLite", { timeout: 180_000 }, () => {
  it("`lllm run` records its run without loading libsql; `lllm logs` loads it and lists the run", async () => {
    const home = tempDir();
    const dir = tempDir();
    const list = path.join(dir, "modules.txt");
    const register = path.join(dir, "register.mjs");
    writeFileSync(register, 'import { appendFileSync } from "node:fs";\nimport { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\nprocess.on("exit", () => appendFileSync(process.env.MODULE_LIST, Object.keys(require.cache).join("\\n") + "\\n"));\n');
    const lllm = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        writeFileSync(list, "");
        const child = spawn(process.execPath, ["--import", pathToFileURL(register).href, BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_HOME: home, NO_COLOR: "1", MODULE_LIST: list }, stdio: ["ignore", "pipe", "ignore"] });
        let stdout = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.on("close", (code) => resolve({ code, stdout }));
      });
    const loadedLibsql = () => readFileSync(list, "utf8").split("\n").some((module) => module.includes(`${path.sep}libsql${path.sep}`));
    const run = await lllm(["run", "packages-example/weather/tactics/weather.yaml", "--model", "scripted:packages-example/weather/scripted/paris-tokyo.yaml", "--input", "Paris?", "--no-stream"]);
    expect(run.code).toBe(0);
    expect(loadedLibsql()).toBe(false);
    const logs = await lllm(["logs", "--json"]);
    expect(logs.code).toBe(0);
    // The hook sees libsql when it is loaded: a hook that saw nothing cannot pass for a run that loads nothing.
    expect(loadedLibsql()).toBe(true);
    expect((JSON.parse(logs.stdout) as { runs: Array<{ input: string; status: string }> }).runs).toMatchObject([{ input: "Paris?", status: "ok" }]);
  });

  it("a batch killed with SIGKILL loses no run whose result line it wrote", async () => {
    const setup = await echoSetup({ delayMs: 30 });
    closers.push(() => setup.server.close());
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 200 }, (_, index) => `item ${index}`).join("\n"));
    const out = path.join(setup.dir, "out.jsonl");
    const batch = spawnBatch([setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "4", "--quiet"], setup.env);
    expect(await waitUntil(() => wholeLines(out) >= 20, 60_000)).toBe(true);
    batch.child.kill("SIGKILL");
    await batch.done;
    const written = readResults(out);
    const runs = new Map((await listRuns(setup.home, ["-n", "1000"])).map((run) => [run.id, run]));
    for (const line of written) expect(runs.get(line.run_id!), `run ${line.run_id} of item ${line.id}`).toMatchObject({ status: "ok", output: `echo: item ${Number(line.id) - 1}` });
    // What was still running reads as crashed, not as running for ever.
    expect([...runs.values()].filter((run) => run.status === "running")).toEqual([]);
    expect(await cli(setup.home, ["logs", "--status", "crashed"])).toMatchObject({ code: 0 });
  });
});
