import { currentToolScope, setShowCommandStderr, type ToolScope } from "../tools/toolScope.js";
import { isOwnStdoutWrite } from "../util/ownStdout.js";
import { terminalText } from "../util/terminalText.js";

type Write = (chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void) => boolean;

/**
 * Reserve the CLI's stdout for the answer (or the JSON of `--json`): only lllm's own output reaches it (written
 * through `writeOwnStdout`); whatever else is written to stdout, with `console.log` or `process.stdout.write`,
 * goes to stderr, so `lllm run --json | jq` keeps working whatever a tool prints, even later, from a timer it
 * left running. What tool code writes (to either stream) is marked with the tool's name (`[get_weather] …`):
 * tool code is recognised by the scope `FunctionTool.call` (and a tool file's import) runs it in. A command
 * tool's stderr is shown too. Patching `write` on the stream objects catches `console.*` too, since the global
 * console writes through them.
 */
let reserved = false;

export function reserveStdout(): void {
  if (reserved) return; // patching twice would mark lines twice
  reserved = true;
  const stdout = process.stdout as unknown as { write: Write };
  const stderr = process.stderr as unknown as { write: Write };
  const writeOut = stdout.write.bind(process.stdout);
  const writeErr = stderr.write.bind(process.stderr);
  const redirect = (original: Write, reserved: boolean): Write =>
    function write(chunk, encoding, callback) {
      const scope = isOwnStdoutWrite() ? undefined : currentToolScope();
      if (!scope) {
        if (!reserved || isOwnStdoutWrite()) {
          // lllm's own line on stderr (an approval question, a `↳ tool` line) starts a line of its own.
          if (!reserved) endOpenToolLine(undefined, writeErr);
          return original(chunk, encoding as BufferEncoding, callback);
        }
        return writeErr(chunk, encoding as BufferEncoding, callback);
      }
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8");
      endOpenToolLine(scope, writeErr);
      return writeErr(markLines(scope, text), typeof encoding === "function" ? encoding : callback);
    };
  stdout.write = redirect(writeOut, true);
  stderr.write = redirect(writeErr, false);
  setShowCommandStderr(true);
}

/**
 * `[label] ` at the start of every line the scope writes; a line written in several pieces is marked once. The
 * tool's text has its control characters shown as escapes: it cannot recolour, clear or retitle the terminal, nor
 * move the cursor back over lllm's own lines (an approval question).
 */
export function markLines(scope: ToolScope, text: string): string {
  let marked = "";
  for (const piece of text.split(/(?<=\n)/)) {
    if (piece === "") continue;
    marked += scope.atLineStart ? `[${terminalText(scope.label)}] ${terminalText(piece)}` : terminalText(piece);
    scope.atLineStart = piece.endsWith("\n");
  }
  if (!scope.atLineStart) openToolLine = scope;
  else if (openToolLine === scope) openToolLine = undefined;
  return marked;
}

/** The tool whose last line on stderr has no newline yet (`process.stderr.write("Allow it? ")`), if any. */
let openToolLine: ToolScope | undefined;

/**
 * End the line a tool left open before anyone else writes on stderr: lllm itself (`by` undefined) or another tool.
 * Glued to it, lllm's own line read as the tool's, and the tool's text stood before the approval question on its
 * line ("[tool] lllm: approval of a tool call: … Allow it? lllm: approval of a tool call: …").
 */
function endOpenToolLine(by: ToolScope | undefined, write: Write): void {
  const open = openToolLine;
  if (open === undefined || open === by) return;
  openToolLine = undefined;
  open.atLineStart = true;
  write("\n");
}
