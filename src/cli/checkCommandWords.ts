import type * as Commander from "commander";
import { didYouMean } from "../util/closest.js";

/**
 * Refuse, before commander parses, a command word that names no command, with lllm's did-you-mean: commander
 * itself prints the program's help for `lllm add --help` (exit 0), as if `add` existed, and its suggestions are
 * loose (`bogus`: did you mean logs?). The names come from the command tree, so a command added later is known at
 * once. Only the levels that take a subcommand are checked (lllm itself, `tools`, `logs`, …): elsewhere a word is
 * an argument. `lllm -v` alone is refused too: it reads as a request for the version, which is `-V`.
 * Errors go through commander (`command.error`), so they read and exit (2) as its other usage errors do.
 */
export function checkCommandWords(program: Commander.Command, args: string[]): void {
  let command = program;
  let from = 0;
  for (;;) {
    const found = nextOperand({ command, program, args, from });
    if (found === undefined) {
      if (command === program && args.length > 0 && args.every((arg) => arg === "-v" || arg === "--verbose")) {
        return program.error("error: no command given: -v is --verbose (with a command: lllm -v run …); the version is lllm -V (--version)", { code: "lllm.noCommand", exitCode: 2 });
      }
      return;
    }
    if (command.commands.length === 0 || command.registeredArguments.length > 0) return;
    const sub = command.commands.find((candidate) => candidate.name() === found.word || candidate.aliases().includes(found.word));
    if (sub === undefined) {
      const names = command.commands.filter((candidate) => !(candidate as unknown as { _hidden?: boolean })._hidden).flatMap((candidate) => [candidate.name(), ...candidate.aliases()]);
      const guess = didYouMean(found.word, names);
      const what = command === program ? found.word : `${commandPath(command)} ${found.word}`;
      return command.error(`error: unknown command '${what}'${guess ? `\n(${guess})` : ""}`, { code: "commander.unknownCommand", exitCode: 2 });
    }
    command = sub;
    from = found.index + 1;
  }
}

/** The first word from `from` on that is neither a flag nor a flag's value. */
function nextOperand(options: { command: Commander.Command; program: Commander.Command; args: string[]; from: number }): { word: string; index: number } | undefined {
  const { command, program, args } = options;
  const known = [...command.options, ...(command === program ? [] : program.options)];
  for (let index = options.from; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === "--") return index + 1 < args.length ? { word: args[index + 1]!, index: index + 1 } : undefined;
    if (!arg.startsWith("-") || arg === "-") return { word: arg, index };
    if (arg.includes("=")) continue;
    const option = known.find((candidate) => candidate.short === arg || candidate.long === arg);
    const next = args[index + 1];
    // A value taken as commander takes it: always for `<value>`, for `[value]` when it is not a flag.
    if (option?.required || (option?.optional && next !== undefined && !next.startsWith("-"))) index += 1;
  }
  return undefined;
}

function commandPath(command: Commander.Command): string {
  const names: string[] = [];
  for (let at: Commander.Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}
