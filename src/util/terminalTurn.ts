/**
 * The one queue of every question this process asks at the terminal: approvals, tools' and MCP servers'
 * questions (elicitation), a resume's question about an unfinished call, consent to a package's code. A question
 * is shown and read only in its turn, once every question asked before it was answered: two questions never read
 * the same line, and what is typed answers the question shown last (the only one on the screen that waits).
 */
const QUEUE = Symbol.for("lllm.terminalQuestions");
/**
 * The end of the queue, kept on `globalThis`: one per process even when lllm's code is loaded twice (the CLI's
 * bundle and a package's own copy of lllm, say).
 */
const queue = ((globalThis as { [QUEUE]?: { last: Promise<unknown> } })[QUEUE] ??= { last: Promise.resolve() });

/**
 * Run `ask` (which shows a question and reads its answer) once every question queued before it has settled. The
 * turn is taken when this is called, before any await, so the order of the calls is the order of the questions.
 */
export function inTurn<T>(ask: () => Promise<T>): Promise<T> {
  const turn = queue.last.then(ask);
  queue.last = turn.catch(() => undefined);
  return turn;
}

/** How many turns of the event loop at most are spent dropping input that keeps coming (a key held down). */
const MAX_DRAIN_TURNS = 20;

/**
 * Drop what was typed at the terminal before a question is shown, so that it cannot answer it (a `y` typed ahead,
 * or meant for a question that is gone). Call it just before the question is written. On a terminal, standard input
 * is put in raw mode for a moment: the kernel then hands over what it holds, a line not yet ended by Enter too, and
 * whatever arrives in the next turns of the event loop is read and dropped (the line discipline's own flush,
 * `tcflush`, is not in Node); the mode is then set back. A Ctrl-C among what was dropped is sent on as SIGINT (raw mode
 * reads it as a key). A stream that is not a terminal (a pipe, a test's stream) is left alone: what it holds was
 * written on purpose.
 */
export function discardTypedAhead(input: NodeJS.ReadableStream): Promise<void> {
  const tty = input as Partial<NodeJS.ReadStream> & NodeJS.ReadableStream;
  if (tty.isTTY !== true || typeof tty.setRawMode !== "function") return Promise.resolve();
  const wasRaw = tty.isRaw === true;
  return new Promise((resolve) => {
    let dropped = false;
    let interrupted = false;
    const drop = (chunk: Buffer | string): void => {
      dropped = true;
      if (String(chunk).includes("\u0003")) interrupted = true;
    };
    const finish = (): void => {
      tty.off("data", drop);
      tty.pause();
      try {
        tty.setRawMode?.(wasRaw);
      } catch {
        // the terminal went away: the question meets the end of its input
      }
      if (interrupted) process.kill(process.pid, "SIGINT");
      resolve();
    };
    try {
      tty.setRawMode?.(true);
    } catch {
      resolve();
      return;
    }
    tty.on("data", drop);
    tty.resume();
    // The read starts on the next tick; the loop's next poll reads what the terminal holds; a second immediate runs
    // after that poll. Again while input keeps coming.
    let turns = 0;
    const quiet = (): void => {
      turns += 1;
      const more = dropped && turns < MAX_DRAIN_TURNS;
      dropped = false;
      if (more) setImmediate(() => setImmediate(quiet));
      else finish();
    };
    setImmediate(() => setImmediate(quiet));
  });
}
