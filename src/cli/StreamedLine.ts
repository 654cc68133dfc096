import { terminalText } from "../util/terminalText.js";

/**
 * The streamed answer's line. On a terminal, the answer's control characters are shown as escapes: a model's
 * `ESC[8m` would otherwise hide everything after it (an approval question included), and an OSC sequence would
 * retitle the window; into a pipe or a file the answer is data, written byte for byte. When stdout and stderr are
 * one terminal, a progress line (`--verbose`) written while the streamed answer's line is still open would be
 * glued to it; `breakForLog()` ends that line first, on stderr, so the answer's bytes on stdout stay exactly the
 * answer.
 */
export class StreamedLine {
  private open = false;
  private readonly stdoutTerminal: boolean;
  private readonly sameTerminal: boolean;

  /** Whether stdout and stderr are terminals (when either is redirected, nothing is glued). */
  constructor(terminals: { stdout: boolean; stderr: boolean } = { stdout: Boolean(process.stdout.isTTY), stderr: Boolean(process.stderr.isTTY) }) {
    this.stdoutTerminal = terminals.stdout;
    this.sameTerminal = terminals.stdout && terminals.stderr;
  }

  /** Record a piece of the streamed answer; what to write on stdout for it (escaped on a terminal). */
  text(delta: string): string {
    if (delta !== "") this.open = !delta.endsWith("\n");
    return this.stdoutTerminal ? terminalText(delta) : delta;
  }

  /** What to write on stderr before a log line: a newline when the answer's line is open on the same terminal. */
  breakForLog(): string {
    if (!this.open || !this.sameTerminal) return "";
    this.open = false;
    return "\n";
  }

  /** The newline that ends the answer: none on a terminal whose line is already ended (no blank line). */
  end(): string {
    return this.sameTerminal && !this.open ? "" : "\n";
  }
}
