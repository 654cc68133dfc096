import { LllmError, ToolError } from "../errors.js";
import { unsettledToolScopes } from "../tools/toolScope.js";
import { addFailureDetails, failureJson, reportError, runningCommandDetails, writeOut } from "./output.js";

/**
 * Fail the command when Node's event loop drains before it finished. That happens when the command awaits a
 * promise nothing will ever settle (a tool whose `run` returns `new Promise(() => {})`): Node then simply exits,
 * with status 0 and nothing on stdout, which a pipeline would take for a good, empty answer. Here it becomes an
 * error naming the tool that never settled, exit 1 (and the failure object with `--json`).
 *
 * Returns a function that stops watching, to call when the command has finished.
 */
export function failIfLoopDrains(options: { verbose: boolean; json: () => boolean }): () => void {
  const onBeforeExit = (): void => {
    process.off("beforeExit", onBeforeExit);
    const error = unfinishedError();
    addFailureDetails(error, runningCommandDetails());
    process.exitCode = reportError(error, options.verbose);
    if (options.json()) writeOut(JSON.stringify(failureJson(error), null, 2));
  };
  process.on("beforeExit", onBeforeExit);
  return () => process.off("beforeExit", onBeforeExit);
}

function unfinishedError(): LllmError {
  const scopes = unsettledToolScopes();
  const last = scopes.at(-1);
  if (!last) {
    return new LllmError("run_unfinished", "the command ended before it finished: something it was waiting for never settled, so there is no answer", {
      hint: "Run again with --verbose; if no package code is involved, this is a bug in lllm: please report it.",
    });
  }
  if (last.kind === "import") {
    return new ToolError("tool_never_settled", `package file \`${last.label}\` never finished loading: its top-level code awaits a promise that never settles, and nothing else was left to wait for`, {
      ...(last.file ? { location: { file: last.file } } : {}),
      hint: "Look for a top-level `await` in the file (or in what it imports) that waits for something that never happens.",
    });
  }
  const names = [...new Set(scopes.filter((scope) => scope.kind === "run").map((scope) => `\`${scope.label}\``))].join(", ");
  return new ToolError("tool_never_settled", `tool ${names} never finished: it returned a promise that never resolved or rejected, and nothing else was left to wait for, so the run ended without an answer`, {
    ...(last.file ? { location: { file: last.file } } : {}),
    hint: "Make the tool's run resolve or reject on every path (look for a callback that is never called, an event that never fires, a promise that is never resolved).",
  });
}
