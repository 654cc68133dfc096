import type * as Commander from "commander";

/**
 * What a word is completed with: fixed `choices`, lllm's model names, tactic files and package refs, run ids
 * from the run store, folders, files, or anything (`other`: the shell's default).
 */
export type WordKind = "choices" | "model" | "tactic" | "run" | "dir" | "file" | "other";

/** What a shell completes for one command path (`run`, `tools list`): from the command tree itself, so it never drifts. */
export interface CompletionEntry {
  /** `""` for the top level, else the words of the command (`tools list`). */
  path: string;
  description: string;
  subcommands: string[];
  options: Array<{ flags: string[]; takesValue: boolean; value: WordKind; choices?: string[]; description: string }>;
  /** The first positional argument, when the command takes one: what completes it. */
  argument?: { kind: WordKind; choices?: string[] };
}

export interface CompletionDataOptions {
  /** Words an argument is completed with although commander takes any (`help`: topics and commands), by command path. */
  argumentWords?: Readonly<Record<string, readonly string[]>>;
}

/** Every command path of the program, top level first. */
export function completionData(program: Commander.Command, options: CompletionDataOptions = {}): CompletionEntry[] {
  const entries: CompletionEntry[] = [];
  const visit = (command: Commander.Command, path: string): void => {
    const visible = command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
    const flags = [...command.options, ...(path === "" ? [] : program.options)]
      .filter((option) => !option.hidden)
      .map((option) => {
        const names = [option.short, option.long].filter((flag): flag is string => flag !== undefined);
        const takesValue = option.required || option.optional;
        return {
          flags: names,
          takesValue,
          value: option.argChoices ? ("choices" as const) : takesValue ? valueKind(names) : ("other" as const),
          ...(option.argChoices ? { choices: option.argChoices } : {}),
          description: option.description,
        };
      });
    flags.push({ flags: ["-h", "--help"], takesValue: false, value: "other", description: "display help" });
    const first = command.registeredArguments[0];
    const words = options.argumentWords?.[path];
    const choices = first?.argChoices ?? (words ? [...words] : undefined);
    entries.push({
      path,
      description: command.description(),
      subcommands: visible.map((sub) => sub.name()),
      options: flags,
      ...(first ? { argument: choices ? { kind: "choices", choices } : { kind: argumentKind(first.name()) } } : {}),
    });
    for (const sub of visible) visit(sub, path === "" ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, "");
  return entries;
}

/** What an option's value is, by the option's name. */
export function valueKind(flags: string[]): WordKind {
  if (flags.includes("--model")) return "model";
  if (flags.includes("--package")) return "dir";
  if (flags.includes("--continue") || flags.includes("--resume")) return "run";
  if (flags.some((flag) => ["--input-file", "--env-file", "--out", "--output", "--file", "--junit", "--dataset", "--inputs", "--notebook-out"].includes(flag))) return "file";
  return "other";
}

/** What a positional argument is, by its name in the command tree (`<tactic>`, `[dir]`, `<id>`, `[paths...]`). */
function argumentKind(name: string): WordKind {
  if (name === "tactic") return "tactic";
  if (name === "dir") return "dir";
  if (name === "id") return "run";
  if (name === "paths") return "file";
  return "other";
}
