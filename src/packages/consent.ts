import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import { ConfigError } from "../errors.js";
import type { LockTrust } from "../registry/installed/lockFile.js";
import { discardTypedAhead, inTurn } from "../util/terminalTurn.js";

/** How consent to a package's code is given: `--trust` (a script), or a question at a terminal. */
export interface ConsentOptions {
  /** `--trust`: yes to every package's code, for scripts that read it beforehand. */
  trust: boolean;
  /** Asks a yes/no question and gives the answer; undefined where no one can answer (no terminal). */
  ask?: (question: string) => Promise<string>;
  /** Where the code is shown. */
  write: (text: string) => void;
}

/**
 * The consent to run a package's code, or a ConfigError when none is given. The code is shown first, one line a
 * file, with what lllm would run; a yes at the terminal or `--trust` accepts it, anything else refuses it and
 * nothing is installed.
 */
export async function consentToCode(label: string, code: readonly string[], options: ConsentOptions): Promise<LockTrust> {
  const by = userName();
  const listing = `${label} carries code that lllm would run:\n${code.map((line) => `  ${line}`).join("\n")}`;
  if (options.trust) {
    options.write(`lllm: ${listing}\nlllm: trusted with --trust`);
    return { by, how: "--trust" };
  }
  if (options.ask === undefined) {
    throw new ConfigError("package_code_refused", `${listing}\nand no one was asked to trust it (no terminal)`, {
      hint: "Read the code, then run the command again at a terminal to be asked, or with --trust in a script. Packages of prompts and YAML tactics alone need no consent.",
    });
  }
  options.write(`lllm: ${listing}`);
  const answer = (await options.ask("Trust this code and install it? [y/N] ")).trim().toLowerCase();
  if (answer === "y" || answer === "yes") return { by, how: "terminal" };
  throw new ConfigError("package_code_refused", `${label}: its code was not trusted; nothing was installed`, { hint: "Install it only once you trust its code (answer y, or pass --trust in a script)." });
}

/** A question at the terminal, when standard input and standard error are one; else undefined. */
export function terminalQuestion(): ConsentOptions["ask"] {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  // In its turn among the terminal's questions, with what was typed before it dropped.
  return (question: string) =>
    inTurn(async () => {
      await discardTypedAhead(process.stdin);
      return new Promise<string>((resolve) => {
        const reader = createInterface({ input: process.stdin, output: process.stderr });
        reader.question(question, (answer) => {
          resolve(answer); // before close(), whose "close" event answers "" (for a terminal that ends: no)
          reader.close();
        });
        reader.on("close", () => resolve(""));
      });
    });
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? "unknown";
  }
}
