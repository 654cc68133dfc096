/**
 * An answer body that grew past the transport's cap (`reply_size`): reading it stopped there. A server (or a gzip
 * body that inflates a thousandfold) must not fill lllm's memory until V8 gives up with an internal error.
 */
export class ReplyTooLarge extends Error {
  constructor(
    /** The cap, in bytes of the decoded body. */
    readonly limitBytes: number,
  ) {
    super(`larger than ${describeBytes(limitBytes)}`);
    this.name = "ReplyTooLarge";
  }
}

/** `64 MB`, `512 KB`, `100 bytes`. */
export function describeBytes(bytes: number): string {
  const units: Array<[string, number]> = [["GB", 1024 ** 3], ["MB", 1024 ** 2], ["KB", 1024]];
  for (const [unit, size] of units) if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  return `${bytes} bytes`;
}

/** The `ReplyTooLarge` in an error's cause chain (SDKs wrap what their fetch threw), if any. */
export function replyTooLargeIn(error: unknown): ReplyTooLarge | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; current = current.cause, depth += 1) {
    if (current instanceof ReplyTooLarge) return current;
  }
  return undefined;
}
