import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface, type Interface } from "node:readline";
import { redactSecrets } from "../util/redact.js";
import { paint } from "./output.js";

/** How many inputs the history file keeps. */
const HISTORY_SIZE = 1000;

export interface ChatInputOptions {
  /** A person at a terminal: prompts, line editing, history. Otherwise lines are read from stdin, one turn each. */
  terminal: boolean;
  /** Where the history is kept between sessions (terminal only); written readable by this user alone. */
  historyFile?: string;
  /** Ctrl-C typed at the terminal (raw mode: it reaches lllm as a key, not as a signal). */
  onInterrupt: () => void;
}

/**
 * The chat's input: a line is one turn, and a block between two `"""` lines (or `"""text … text"""`) is one turn of
 * several lines. On a terminal readline edits the line and keeps the history (up arrow), across sessions in
 * `historyFile`; lines typed while an answer is being written wait their turn.
 */
export class ChatInput {
  private readonly rl: Interface;
  private readonly queue: string[] = [];
  private ended = false;
  private waiting: (() => void) | undefined;

  constructor(private readonly options: ChatInputOptions) {
    const history = options.terminal && options.historyFile !== undefined ? readHistory(options.historyFile) : [];
    this.rl = createInterface({
      input: process.stdin,
      // The prompt and the echo go to stderr: stdout carries the answers alone, even when it is redirected.
      ...(options.terminal ? { output: process.stderr, terminal: true, history, historySize: HISTORY_SIZE, removeHistoryDuplicates: true } : { terminal: false }),
    });
    this.rl.on("line", (line) => {
      this.queue.push(line);
      this.wake();
    });
    this.rl.on("close", () => {
      this.ended = true;
      this.wake();
    });
    this.rl.on("SIGINT", () => options.onInterrupt());
    if (options.terminal && options.historyFile !== undefined) {
      const file = options.historyFile;
      this.rl.on("history", (entries: string[]) => writeHistory(file, entries));
    }
  }

  /** The next input (a line or a `"""` block), or undefined at the end (Ctrl-D, the end of stdin, `close()`). */
  async next(): Promise<string | undefined> {
    this.prompt(paint("bold", "> "));
    const first = await this.line();
    if (first === undefined) return undefined;
    const opening = first.trimStart();
    if (!opening.startsWith('"""')) return first;
    const rest = opening.slice(3);
    if (rest.trimEnd().endsWith('"""') && rest.trimEnd().length >= 3) return rest.trimEnd().slice(0, -3);
    const lines = rest === "" ? [] : [rest];
    for (;;) {
      this.prompt(paint("dim", "… "));
      const line = await this.line();
      // The end of the input inside a block sends what was typed.
      if (line === undefined) return lines.join("\n");
      const trimmed = line.trimEnd();
      if (trimmed.endsWith('"""')) {
        const last = trimmed.slice(0, -3);
        if (last.trim() !== "") lines.push(last);
        return lines.join("\n");
      }
      lines.push(line);
    }
  }

  /** Ctrl-C at the prompt: drop the line being typed and prompt again. */
  clearLine(): void {
    if (!this.options.terminal || this.ended) return;
    (this.rl as unknown as { line: string }).line = "";
    process.stderr.write("\n");
    this.rl.prompt();
  }

  close(): void {
    this.ended = true;
    this.rl.close();
    this.wake();
  }

  private prompt(text: string): void {
    // Not once the input ended: Node 24's readline throws on a prompt after its close (Node 20's did nothing).
    if (!this.options.terminal || this.queue.length > 0 || this.ended) return;
    this.rl.setPrompt(text);
    this.rl.prompt();
  }

  private async line(): Promise<string | undefined> {
    while (this.queue.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.waiting = resolve));
    return this.queue.shift();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}

/** Newest first, as readline keeps it; the file holds one input a line, oldest first (as a shell's does). */
function readHistory(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter((line) => line !== "").reverse().slice(0, HISTORY_SIZE);
  } catch {
    return [];
  }
}

function writeHistory(file: string, entries: string[]): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // What was typed or pasted may hold a key (the process's keys are registered with the redactor): never on disk.
    writeFileSync(file, `${[...entries].reverse().map(redactSecrets).join("\n")}\n`, { mode: 0o600 });
    // An older file keeps its mode through writeFileSync: what you typed is yours alone.
    chmodSync(file, 0o600);
  } catch {
    // A history that cannot be kept is not worth stopping the conversation for.
  }
}
