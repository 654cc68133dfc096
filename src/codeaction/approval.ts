import { createInterface } from "node:readline";

/** A call waiting for approval: the tool and the arguments it would run with. */
export interface ApprovalRequest {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * Decides whether a call to a tool declared `approval: required` may run. Resolve `true` to run it; `false`
 * refuses it, and the program gets `ToolApprovalDenied`. Requests come one at a time.
 */
export type ApprovalPolicy = (request: ApprovalRequest) => Promise<boolean>;

/** `--approve all`. */
export const approveAll: ApprovalPolicy = async () => true;

/** `--approve none`, and the default when nobody can be asked. */
export const approveNone: ApprovalPolicy = async () => false;

/**
 * Ask a person: the call is shown on `output` (stderr) and a line is read from `input`; only `y` or `yes` runs
 * it. Questions are asked one at a time, even when a program calls from several threads.
 */
export function askOnTerminal(streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } = { input: process.stdin, output: process.stderr }): ApprovalPolicy {
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const answer = queue.then(() => ask(request, streams));
    queue = answer.catch(() => false);
    return answer;
  };
}

function ask(request: ApprovalRequest, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }): Promise<boolean> {
  const shown = JSON.stringify(request.arguments);
  const text = shown.length > 400 ? `${shown.slice(0, 399)}…` : shown;
  return new Promise((resolve) => {
    const reader = createInterface({ input: streams.input, output: streams.output, terminal: false });
    let settled = false;
    const finish = (allowed: boolean): void => {
      if (settled) return;
      settled = true;
      reader.close();
      resolve(allowed);
    };
    reader.question(`lllm: the program wants to call ${request.tool}(${text}). Allow it? [y/N] `, (line) => finish(/^\s*y(es)?\s*$/i.test(line)));
    reader.once("close", () => finish(false)); // end of input: nobody said yes
  });
}
