/** How much of each end of an oversized line is kept, to find the id of the message it carried. */
const EDGE_BYTES = 512;

/** A line that was over the limit and was dropped as it arrived. */
export interface OversizedLine {
  /** Its size in bytes. */
  bytes: number;
  /** The JSON-RPC id found at its start or end (`{"jsonrpc":"2.0","id":7,…` or `…,"id":7}`), if any. */
  id: string | number | undefined;
  /** Whether it names a method near its start: a request or notification rather than a response. */
  hasMethod: boolean;
}

export interface LineSplitterOptions {
  maxLineBytes: number;
  onLine: (line: string) => void;
  onOversized: (line: OversizedLine) => void;
}

/**
 * Newline-delimited messages from an untrusted stream (JSON-RPC over stdio, both ways). Chunks are kept as they
 * arrive and joined once per line, so long lines cost linear time; a line over `maxLineBytes` is dropped as it
 * arrives (only its two ends are kept, for its id), so it cannot fill memory and does not end the stream.
 */
export class LineSplitter {
  readonly #options: LineSplitterOptions;
  #chunks: Buffer[] = [];
  #bytes = 0;
  /** While a line is over the limit: its first bytes, its last bytes, and its size so far. */
  #oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;

  constructor(options: LineSplitterOptions) {
    this.#options = options;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      this.#keep(chunk.subarray(start, newline));
      start = newline + 1;
      const oversized = this.#oversized;
      const line = oversized ? undefined : Buffer.concat(this.#chunks).toString("utf8").replace(/\r$/, "");
      this.clear();
      if (oversized) {
        const head = oversized.head.toString("utf8");
        this.#options.onOversized({ bytes: oversized.bytes, id: findId(head) ?? findId(oversized.tail.toString("utf8")), hasMethod: /(?<!\\)"method"\s*:/.test(head) });
      }
      else if (line !== undefined && line.trim() !== "") this.#options.onLine(line);
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  /** Forget a partial line. */
  clear(): void {
    this.#chunks = [];
    this.#bytes = 0;
    this.#oversized = undefined;
  }

  #keep(part: Buffer): void {
    if (this.#oversized) {
      this.#oversized.bytes += part.length;
      this.#oversized.tail = Buffer.from(Buffer.concat([this.#oversized.tail, part]).subarray(-EDGE_BYTES));
      return;
    }
    this.#chunks.push(part);
    this.#bytes += part.length;
    if (this.#bytes > this.#options.maxLineBytes) {
      const whole = Buffer.concat(this.#chunks);
      this.#oversized = { head: Buffer.from(whole.subarray(0, EDGE_BYTES)), tail: Buffer.from(whole.subarray(-EDGE_BYTES)), bytes: whole.length };
      this.#chunks = [];
    }
  }
}

/** The id of a JSON-RPC message from one end of its text (a line of stdio, an event's data). */
export function findId(text: string): string | number | undefined {
  const match =
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(text) ?? /[,{]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(text);
  if (!match?.[1]) return undefined;
  return match[1].startsWith('"') ? (JSON.parse(match[1]) as string) : Number(match[1]);
}
