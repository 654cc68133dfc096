import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { splitCommandLine } from "../../mcp/splitCommandLine.js";
import { answerText, caseRunJson } from "../CaseRun.js";
import { outputTail, runCheckProcess } from "../runCheckProcess.js";
import type { AssertionHandler } from "./AssertionHandler.js";
import { processTempDir } from "../../util/processTempDir.js";

/**
 * `script: python3 checks/verify.py`: a program decides, run in the test file's folder (no shell) within the
 * assertion's timeout: exit 0 passes. It reads the answer on stdin; the run as JSON is in the file `$LLLM_TEST_RUN`
 * names. What it prints is the reason shown when it fails.
 */
export const script: AssertionHandler = async (value, { run, folder, timeoutMs, signal }) => {
  const command = splitCommandLine(value as string);
  const label = value as string;
  const scratch = processTempDir("lllm-check-");
  try {
    const runFile = path.join(scratch, "run.json");
    writeFileSync(runFile, JSON.stringify(caseRunJson(run), null, 2));
    const outcome = await runCheckProcess({ command, input: answerText(run), cwd: folder, timeoutMs, env: { ...process.env, LLLM_TEST_RUN: runFile }, ...(signal ? { signal } : {}) });
    if (outcome.kind === "timeout") return { pass: false, score: 0, reason: `\`${label}\` did not finish within ${timeoutMs / 1000} s and was killed (give the assertion a longer \`timeout\`)`, broken: true };
    if (outcome.kind === "not_found") return { pass: false, score: 0, reason: `\`${label}\` could not run: program \`${outcome.program}\` was not found (on PATH, or relative to the test file's folder when it has a /)`, broken: true };
    if (outcome.kind === "failed") return { pass: false, score: 0, reason: `\`${label}\` could not run: ${outcome.message}`, broken: true };
    const said = outputTail(`${outcome.stdout}\n${outcome.stderr}`);
    if (outcome.code === 0) return { pass: true, score: 1, reason: `\`${label}\` exited 0${said ? `: ${said}` : ""}` };
    const how = outcome.code === null ? `was killed by ${outcome.signal ?? "a signal"}` : `exited ${outcome.code}`;
    return { pass: false, score: 0, reason: `\`${label}\` ${how}${said ? `: ${said}` : ""}`, ...(outcome.code === null ? { broken: true } : {}) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};
