import type * as Commander from "commander";

/** What a shell completes for one command path (`run`, `tools list`): from the command tree itself, so it never drifts. */
export interface CompletionEntry {
  /** `""` for the top level, else the words of the command (`tools list`). */
  path: string;
  description: string;
  subcommands: string[];
  options: Array<{ flags: string[]; takesValue: boolean; choices?: string[]; description: string }>;
  /** The name of the first positional argument (`tactic`, `dir`, `ref`, `kind`), when it has one; its choices. */
  argument?: { name: string; choices?: string[] };
}

/** Every command path of the program, top level first. */
export function completionData(program: Commander.Command): CompletionEntry[] {
  const entries: CompletionEntry[] = [];
  const visit = (command: Commander.Command, path: string): void => {
    const visible = command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
    const options = [...command.options, ...(path === "" ? [] : program.options)]
      .filter((option) => !option.hidden)
      .map((option) => ({
        flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
        takesValue: option.required || option.optional,
        ...(option.argChoices ? { choices: option.argChoices } : {}),
        description: option.description,
      }));
    options.push({ flags: ["-h", "--help"], takesValue: false, description: "display help" });
    const first = command.registeredArguments[0];
    entries.push({
      path,
      description: command.description(),
      subcommands: visible.map((sub) => sub.name()),
      options,
      ...(first ? { argument: { name: first.name(), ...(first.argChoices ? { choices: first.argChoices } : {}) } } : {}),
    });
    for (const sub of visible) visit(sub, path === "" ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, "");
  return entries;
}

/** What an option's value is, for the dynamic parts: a model name, a package folder, a file, or anything. */
export function valueKind(flags: string[]): "model" | "dir" | "file" | "other" {
  if (flags.includes("--model")) return "model";
  if (flags.includes("--package")) return "dir";
  if (flags.some((flag) => ["--input-file", "--env-file", "--out", "--output", "--file", "--junit", "--dataset"].includes(flag))) return "file";
  return "other";
}
