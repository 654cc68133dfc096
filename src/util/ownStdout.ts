/**
 * Whether what is being written to stdout now is lllm's own output (the answer, `--json`, data a command prints,
 * the MCP protocol). The CLI reserves stdout for that (see cli/reserveStdout.ts): any other write, whoever makes
 * it, goes to stderr, so that a tool's late `console.log` (from a timer it left behind) can never get into a
 * pipeline's data. Without the CLI (library use) these writes are plain `process.stdout.write` calls.
 */
let depth = 0;

/** Write lllm's own output to stdout. */
export function writeOwnStdout(text: string | Uint8Array): boolean {
  depth += 1;
  try {
    return process.stdout.write(text);
  } finally {
    depth -= 1;
  }
}

/** True while `writeOwnStdout` is writing. */
export function isOwnStdoutWrite(): boolean {
  return depth > 0;
}
