import { formatCost } from "../store/RunTally.js";
import type { BatchStats } from "./runBatch.js";
import { formatCount } from "../util/formatCount.js";

export interface BatchProgressOptions {
  stream?: NodeJS.WriteStream;
  /** A live line redrawn in place (a terminal), or plain lines every `intervalMs`. */
  live: boolean;
  intervalMs?: number;
  /** The number of items, once known (counted in the background); the ETA needs it. */
  total?: () => number | undefined;
}

/** The batch's progress on stderr: done, failed, in flight, rate, ETA, tokens and cost so far. */
export class BatchProgress {
  readonly #stream: NodeJS.WriteStream;
  readonly #live: boolean;
  readonly #timer: NodeJS.Timeout;
  readonly #total: () => number | undefined;
  #stats: BatchStats | undefined;
  #drawn = false;

  constructor(options: BatchProgressOptions) {
    this.#stream = options.stream ?? process.stderr;
    this.#live = options.live;
    this.#total = options.total ?? (() => undefined);
    this.#timer = setInterval(() => this.#draw(), options.intervalMs ?? (this.#live ? 250 : 5000));
    this.#timer.unref();
  }

  update(stats: BatchStats): void {
    this.#stats = stats;
  }

  /** Print a line (a warning) without breaking the live line. */
  print(text: string): void {
    this.#clear();
    this.#stream.write(text.endsWith("\n") ? text : `${text}\n`);
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
    const line = progressLine(stats, this.#total());
    if (this.#live) {
      const width = this.#stream.columns ?? 120;
      this.#stream.write(`\r\u001b[K${line.length > width - 1 ? line.slice(0, width - 1) : line}`);
      this.#drawn = true;
    } else this.#stream.write(`${line}\n`);
  }
}

/** `lllm batch: 120/500 done (3 failed), 16 running, 12.3 items/s, ETA 31 s, 45,000 tokens, $0.012` */
export function progressLine(stats: BatchStats, total: number | undefined): string {
  const finished = stats.ok + stats.failed;
  const elapsed = (Date.now() - stats.startedAt) / 1000;
  const rate = elapsed > 0 ? finished / elapsed : 0;
  const remaining = total === undefined ? undefined : Math.max(0, total - finished - stats.skipped);
  const parts = [
    `${finished}${total !== undefined ? `/${Math.max(0, total - stats.skipped)}` : ""} done${stats.failed > 0 ? ` (${stats.failed} failed)` : ""}`,
    `${stats.inFlight} running`,
    `${rate.toFixed(1)} items/s`,
  ];
  if (remaining !== undefined && rate > 0) parts.push(`ETA ${formatSeconds(remaining / rate)}`);
  parts.push(`${formatCount(stats.promptTokens + stats.completionTokens)} tokens`);
  parts.push(stats.costUnknown > 0 && stats.cost === 0 ? "cost unknown" : `${formatCost(stats.cost)}${stats.costUnknown > 0 ? "+" : ""}`);
  return `lllm batch: ${parts.join(", ")}`;
}

function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
