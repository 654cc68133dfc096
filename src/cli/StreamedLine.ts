/**
 * The streamed answer's line on a terminal. When stdout and stderr are one terminal, a progress line (`--verbose`)
 * written while the streamed answer's line is still open would be glued to it; `breakForLog()` ends that line
 * first, on stderr, so the answer's bytes on stdout stay exactly the answer.
 */
export class StreamedLine {
  private open = false;

  /** `sameTerminal`: stdout and stderr are both a terminal (when either is redirected, nothing is glued). */
  constructor(private readonly sameTerminal: boolean) {}

  /** Record a piece of the streamed answer. */
  text(delta: string): void {
    if (delta !== "") this.open = !delta.endsWith("\n");
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
