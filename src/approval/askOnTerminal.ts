import type readline from "node:readline";
import type { ApprovalPolicy, ApprovalRequest } from "./ApprovalPolicy.js";
import { requireNow } from "../util/lazyModule.js";

/** The arguments shown in the question are cut past this many characters. */
const SHOWN_ARGUMENTS = 400;

/**
 * Ask a person, on a terminal: the call (agent, tool and arguments) is shown on `output` (stderr) and a line is
 * read from `input`. `y`/`yes` runs it; `a`/`always` runs it and every later call of that tool in this run
 * without asking; anything else (an empty line, `n`, the end of input, the run stopping) refuses it. Questions
 * are asked one at a time, even when calls come in parallel or from a program's threads. Make one per run.
 */
export function askOnTerminal(streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } = { input: process.stdin, output: process.stderr }): ApprovalPolicy {
  const always = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const answer = queue.then(async () => {
      // Decided while this call waited its turn: an earlier answer may have been "always".
      if (always.has(request.tool)) return true;
      if (request.signal?.aborted) return false;
      const reply = await ask(request, streams);
      if (reply === "always") always.add(request.tool);
      return reply !== "no";
    });
    queue = answer.catch(() => false);
    return answer;
  };
}

function ask(request: ApprovalRequest, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }): Promise<"yes" | "no" | "always"> {
  const shown = JSON.stringify(request.arguments);
  const text = shown.length > SHOWN_ARGUMENTS ? `${shown.slice(0, SHOWN_ARGUMENTS - 1)}…` : shown;
  const who = request.agent !== undefined ? `agent \`${request.agent}\`` : "the program";
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
    reader.question(`lllm: ${who} wants to call ${request.tool}(${text}). Allow it? [y]es / [n]o / [a]lways for this run: `, (line) => {
      const word = line.trim().toLowerCase();
      finish(word === "y" || word === "yes" ? "yes" : word === "a" || word === "always" ? "always" : "no");
    });
    reader.once("close", () => finish("no")); // end of input: nobody said yes
  });
}
