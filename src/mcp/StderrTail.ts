import type { Stream } from "node:stream";

/**
 * The last few kilobytes a server wrote to stderr. Servers log there freely; lllm keeps stdout and stderr for
 * the run's own output, so the log is not forwarded, only kept to explain a failure (a server that will not
 * start usually says why on stderr).
 */
export class StderrTail {
  #text = "";

  constructor(
    stream: Stream | null,
    private readonly limit = 4000,
  ) {
    // Reading also keeps the pipe drained, so a chatty server never blocks on a full stderr buffer.
    stream?.on("data", (chunk: Buffer | string) => {
      this.#text = (this.#text + chunk.toString()).slice(-this.limit);
    });
  }

  /** The last `lines` non-empty lines, trimmed. */
  lines(lines = 15): string[] {
    return this.#text
      .split(/\r?\n/)
      .map((line) => line.trimEnd())
      .filter((line) => line !== "")
      .slice(-lines);
  }

  /** The tail as an indented block for an error message, or "" when the server wrote nothing. */
  describe(): string {
    const lines = this.lines();
    return lines.length === 0 ? "" : `\n  its stderr ends with:\n${lines.map((line) => `    ${line}`).join("\n")}`;
  }
}
