import path from "node:path";
import { transpileCacheFolder } from "../../registry/transpileCache.js";
import { caseRunJson } from "../CaseRun.js";
import { checkRunnerFile, readVerdict } from "../checkVerdict.js";
import { outputTail, runCheckProcess } from "../runCheckProcess.js";
import type { AssertionHandler, AssertionResult } from "./AssertionHandler.js";

/**
 * `javascript: ./checks/isShort.ts`: the file's default export decides, called with the run as JSON (as `lllm run
 * --json` prints it): `true`/`false`, a string (the reason it failed), or `{pass, score, reason}`. It runs in a
 * process of its own within the assertion's timeout, so a check that throws, hangs or exits fails only its case.
 */
export const javascript: AssertionHandler = async (value, { run, folder, timeoutMs, signal }) => {
  const file = path.resolve(folder, value as string);
  const cache = transpileCacheFolder();
  const outcome = await runCheckProcess({
    command: [process.execPath, checkRunnerFile(), file, ...(cache ? [cache] : [])],
    input: JSON.stringify(caseRunJson(run)),
    cwd: folder,
    timeoutMs,
    ...(signal ? { signal } : {}),
  });
  const name = path.basename(file);
  if (outcome.kind === "timeout") return broken(`${name} did not finish within ${timeoutMs / 1000} s and was killed (give the assertion a longer \`timeout\`)`);
  if (outcome.kind !== "exited") return broken(`${name} could not run: ${outcome.kind === "not_found" ? `${outcome.program} was not found` : outcome.message}`);
  const verdict = readVerdict(outcome.stdout);
  if (!verdict) return broken(`${name} ended without an answer (exit ${outcome.code ?? outcome.signal}${outcome.stderr ? `): ${outputTail(outcome.stderr)}` : ")"}`);
  if (verdict.broken !== undefined) return broken(`${name}: ${verdict.broken}`);
  return fromValue(name, verdict.value);
};

function fromValue(name: string, value: unknown): AssertionResult {
  if (value === true) return { pass: true, score: 1, reason: `${name} returned true` };
  if (value === false) return { pass: false, score: 0, reason: `${name} returned false` };
  if (typeof value === "string") return { pass: false, score: 0, reason: value === "" ? `${name} failed` : value };
  if (typeof value === "object" && value !== null && typeof (value as { pass?: unknown }).pass === "boolean") {
    const { pass, score, reason } = value as { pass: boolean; score?: unknown; reason?: unknown };
    return { pass, score: typeof score === "number" && score >= 0 && score <= 1 ? score : pass ? 1 : 0, reason: typeof reason === "string" && reason !== "" ? reason : `${name} returned pass: ${pass}` };
  }
  return broken(`${name} returned ${JSON.stringify(value)}; a check returns true or false, a reason (a string, when it fails), or {pass, score, reason}`);
}

function broken(reason: string): AssertionResult {
  return { pass: false, score: 0, reason, broken: true };
}
