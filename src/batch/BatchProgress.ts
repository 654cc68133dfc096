import { formatCost } from "../store/RunTally.js";
import type { BatchStats } from "./runBatch.js";
import { formatCount } from "../util/formatCount.js";
import { redactSecrets } from "../util/redact.js";
import { terminalText } from "../util/terminalText.js";

export interface BatchProgressOptions {
  stream?: NodeJS.WriteStream;
  /** A live line redrawn in place (a terminal), or plain lines every `intervalMs`. */
  live: boolean;
  intervalMs?: number;
  /** The number of items, once known (counted in the background); the ETA needs it. */
  total?: () => number | undefined;
  /** More to show at the end of the line (`--provider-batch`: its jobs). */
  extra?: () => string | undefined;
  /** Of the items in flight, those waiting for a worker (`--queue`): shown apart from the running ones. */
  waiting?: () => number;
}

/** The batch's progress on stderr: done, failed, in flight, rate, ETA, tokens and cost so far. */
export class BatchProgress {
  readonly #stream: NodeJS.WriteStream;
  readonly #live: boolean;
  readonly #timer: NodeJS.Timeout;
  readonly #total: () => number | undefined;
  readonly #extra: () => string | undefined;
  readonly #waiting: () => number;
  #stats: BatchStats | undefined;
  #drawn = false;

  constructor(options: BatchProgressOptions) {
    this.#stream = options.stream ?? process.stderr;
    this.#live = options.live;
    this.#total = options.total ?? (() => undefined);
    this.#extra = options.extra ?? (() => undefined);
    this.#waiting = options.waiting ?? (() => 0);
    this.#timer = setInterval(() => this.#draw(), options.intervalMs ?? (this.#live ? 250 : 5000));
    this.#timer.unref();
  }

  update(stats: BatchStats): void {
    this.#stats = stats;
  }

  /**
   * Print a line (a warning) without breaking the live line. Made safe as the CLI's other stderr lines are (keys
   * redacted, control characters escaped): the batch's messages quote providers, workers and tools.
   */
  print(text: string): void {
    this.#clear();
    const safe = terminalText(redactSecrets(text), { keepOwnStyles: true });
    this.#stream.write(safe.endsWith("\n") ? safe : `${safe}\n`);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#clear();
  }

  #clear(): void {
    if (this.#live && this.#drawn) this.#stream.write("\r\u001b[K");
    this.#drawn = false;
  }

  #draw(): void {
    const stats = this.#stats;
    if (!stats) return;
    if (this.#live) {
      this.#stream.write(`\r\u001b[K${progressLine(stats, this.#total(), (this.#stream.columns ?? 120) - 1, this.#extra(), this.#waiting())}`);
      this.#drawn = true;
    } else this.#stream.write(`${progressLine(stats, this.#total(), Infinity, this.#extra(), this.#waiting())}\n`);
  }
}

/**
 * `lllm batch: 120/500 done (3 failed), 16 running, 12.3 items/s, ETA 31 s, 45,000 tokens, $0.012`; without a total
 * (a dataset read from a pipe), no `/500` and no ETA. At most `width` characters: parts that do not fit are left
 * out whole (a cut part could read as another number, or as a bare `$`).
 */
export function progressLine(stats: BatchStats, total: number | undefined, width = Infinity, extra?: string, waiting = 0): string {
  const finished = stats.ok + stats.failed;
  const elapsed = (Date.now() - stats.startedAt) / 1000;
  const rate = elapsed > 0 ? finished / elapsed : 0;
  const remaining = total === undefined ? undefined : Math.max(0, total - finished - stats.skipped);
  const parts = [
    `${finished}${total !== undefined ? `/${Math.max(0, total - stats.skipped)}` : ""} done${stats.failed > 0 ? ` (${stats.failed} failed)` : ""}`,
    ...(waiting > 0 ? [`${stats.inFlight - Math.min(waiting, stats.inFlight)} running`, `${Math.min(waiting, stats.inFlight)} waiting for a worker`] : [`${stats.inFlight} running`]),
    `${rate.toFixed(1)} items/s`,
  ];
  if (remaining !== undefined && rate > 0) parts.push(`ETA ${formatSeconds(remaining / rate)}`);
  parts.push(`${formatCount(stats.promptTokens + stats.completionTokens)} tokens`);
  parts.push(stats.costUnknown > 0 && stats.cost === 0 ? "cost unknown" : `${formatCost(stats.cost)}${stats.costUnknown > 0 ? "+" : ""}`);
  if (extra) parts.push(extra);
  let line = "lllm batch:";
  for (const [index, part] of parts.entries()) {
    const next = `${line}${index === 0 ? " " : ", "}${part}`;
    if (next.length > width) break;
    line = next;
  }
  return line.slice(0, width);
}

function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
