import type { Readable, Writable } from "node:stream";

/**
 * Newline-delimited JSON over a pair of pipes. Lines can be megabytes long, so chunks are kept as they arrive and
 * joined once per line instead of growing one string. The other end is untrusted: a line longer than
 * `maxLineBytes` is dropped as it arrives, so that it cannot fill the host's memory.
 */
export class JsonLineChannel<Incoming, Outgoing> {
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private dropping = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly onMessage: (message: Incoming) => void,
    private readonly onInvalid: (line: string) => void,
    private readonly maxLineBytes: number,
  ) {
    input.on("data", (chunk: Buffer) => this.receive(chunk));
    // The kernel may die with data in flight; its exit is reported elsewhere, so a broken pipe is not an error here.
    output.on("error", () => {});
    input.on("error", () => {});
  }

  /** Serialise and write one message. Throws (before writing anything) when `message` is not JSON-serialisable. */
  send(message: Outgoing): void {
    const line = `${JSON.stringify(message)}\n`;
    if (!this.output.destroyed && this.output.writable) this.output.write(line);
  }

  close(): void {
    this.output.destroy();
    this.input.destroy();
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      this.keep(chunk.subarray(start, newline));
      const line = this.dropping ? "" : Buffer.concat(this.pending).toString("utf8");
      if (this.dropping) this.onInvalid(`(a line longer than ${this.maxLineBytes} bytes)`);
      this.pending.length = 0;
      this.pendingBytes = 0;
      this.dropping = false;
      start = newline + 1;
      if (line.length > 0) this.dispatch(line);
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  private keep(part: Buffer): void {
    if (this.dropping) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) {
      this.dropping = true;
      this.pending.length = 0;
    } else if (part.length > 0) {
      this.pending.push(part);
    }
  }

  private dispatch(line: string): void {
    let message: Incoming;
    try {
      message = JSON.parse(line) as Incoming;
    } catch {
      this.onInvalid(line);
      return;
    }
    this.onMessage(message);
  }
}
