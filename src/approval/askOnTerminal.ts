import type readline from "node:readline";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import type { ApprovalPolicy, ApprovalRequest } from "./ApprovalPolicy.js";
import { requireNow } from "../util/lazyModule.js";
import { discardTypedAhead, inTurn } from "../util/terminalTurn.js";

/** Arguments whose JSON is at most this long are shown on the question's line; longer ones one per line. */
const ONE_LINE_ARGUMENTS = 160;
/** A value longer than this is shown with its length, so a long one is seen for what it is. */
const LONG_VALUE = 200;
/** Resets colours and attributes (a concealing `ESC[8m` left by anything before the question). */
const RESET = "\u001b[0m";
/** How every approval question starts: it says what it is, whatever a tool's question said before it. */
const APPROVAL = "lllm: approval of a tool call: ";

/**
 * Ask a person, on a terminal: the call (agent, tool and arguments) is shown on `output` (stderr) and a line is
 * read from `input`. `y`/`yes` runs it; `a`/`always` runs it and every later call of that tool in this run
 * without asking; anything else (an empty line, `n`, the end of input, the run stopping) refuses it. Questions
 * are asked one at a time, even when calls come in parallel or from a program's threads, and in the process's one
 * queue of terminal questions (`inTurn`): a tool's question (elicitation) asked meanwhile waits for the answer, or
 * is answered before the approval is shown, never by the same line. What was typed before the question was shown
 * is dropped. Make one per run.
 */
export function askOnTerminal(streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } = { input: process.stdin, output: process.stderr }): ApprovalPolicy {
  const always = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const answer = queue.then(async () => {
      // Decided while this call waited its turn: an earlier answer may have been "always".
      if (always.has(request.tool)) return true;
      if (request.signal?.aborted) return false;
      const reply = await inTurn(async () => {
        if (request.signal?.aborted) return "no"; // stopped while another question had the terminal
        await discardTypedAhead(streams.input);
        return ask(request, streams);
      });
      if (reply === "always") always.add(request.tool);
      return reply !== "no";
    });
    queue = answer.catch(() => false);
    return answer;
  };
}

/**
 * The call as the question shows it, first saying that this is the approval of a tool call (no tool's question can
 * start so: theirs start with who asks), then every argument whole: on the question's line when short, else one argument a
 * line, the shortest first, so that a long argument (padding) can neither push another off the screen's line nor
 * hide it in a cut; each long value says how long it is. The model wrote all of it: control characters are escapes
 * (JSON leaves DEL, C1 and bidirectional controls raw), and the tool and agent names are escaped as well.
 */
export function approvalQuestion(request: Pick<ApprovalRequest, "tool" | "arguments" | "agent">): string {
  const name = (text: string): string => escapeControlCharacters(text, { all: true });
  const who = request.agent !== undefined ? `agent \`${name(request.agent)}\`` : "the program";
  const json = (value: unknown): string => escapeJsonControlCharacters(JSON.stringify(value) ?? "null");
  const ask = "Allow it? [y]es / [n]o / [a]lways for this run: ";
  const whole = json(request.arguments);
  if (whole.length <= ONE_LINE_ARGUMENTS) return `${APPROVAL}${who} wants to call ${name(request.tool)}(${whole}). ${ask}`;
  const entries = Object.entries(request.arguments).map(([key, value]) => ({ key: json(key), value: json(value) }));
  entries.sort((a, b) => a.value.length - b.value.length);
  const lines = entries.map(({ key, value }) => `  ${key}${value.length > LONG_VALUE ? ` (${value.length.toLocaleString("en-US")} characters)` : ""}: ${value}`);
  return `${APPROVAL}${who} wants to call ${name(request.tool)} with ${entries.length} argument${entries.length === 1 ? "" : "s"}, each whole, shortest first:\n${lines.join("\n")}\n${ask}`;
}

function ask(request: ApprovalRequest, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }): Promise<"yes" | "no" | "always"> {
  // On a terminal, whatever came before (a tool's own output) cannot leave the question hidden or recoloured.
  const reset = (streams.output as { isTTY?: boolean }).isTTY ? RESET : "";
  const question = `${reset}${approvalQuestion(request)}`;
  return new Promise((resolve) => {
    // readline is `require`d with the first question: a run that asks none does not load it.
    const { createInterface } = requireNow<typeof readline>("node:readline");
    const reader = createInterface({ input: streams.input, output: streams.output, terminal: false });
    let settled = false;
    const finish = (reply: "yes" | "no" | "always"): void => {
      if (settled) return;
      settled = true;
      request.signal?.removeEventListener("abort", onAbort);
      reader.close();
      resolve(reply);
    };
    const onAbort = (): void => {
      streams.output.write("\n");
      finish("no");
    };
    request.signal?.addEventListener("abort", onAbort, { once: true });
    reader.question(question, (line) => {
      const word = line.trim().toLowerCase();
      finish(word === "y" || word === "yes" ? "yes" : word === "a" || word === "always" ? "always" : "no");
    });
    reader.once("close", () => finish("no")); // end of input: nobody said yes
  });
}
