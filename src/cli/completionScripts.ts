import { valueKind, type CompletionEntry } from "./completionData.js";

const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;

/**
 * The bash script (zsh loads the same through bashcompinit). The command tree is written into case statements;
 * models and package refs come from `lllm completion --list …` when asked for, so they follow the installed lllm
 * and the packages given with -p.
 */
export function bashScript(entries: CompletionEntry[]): string {
  const cases = (select: (entry: CompletionEntry) => string): string =>
    entries.map((entry) => `    ${quote(entry.path)}) echo ${quote(select(entry))} ;;`).join("\n");
  const choiceCases = entries
    .flatMap((entry) => entry.options.filter((option) => option.takesValue).map((option) => {
      const kind = option.choices ? `choices:${option.choices.join(" ")}` : valueKind(option.flags);
      return `    ${quote(entry.path)}/${option.flags.map((flag) => quote(flag)).join(`|${quote(entry.path)}/`)}) echo ${quote(kind)} ;;`;
    }))
    .join("\n");
  const argumentCases = entries
    .filter((entry) => entry.argument)
    .map((entry) => `    ${quote(entry.path)}) echo ${quote(entry.argument!.choices ? `choices:${entry.argument!.choices.join(" ")}` : entry.argument!.name)} ;;`)
    .join("\n");
  return `# lllm completion for bash (and zsh, through bashcompinit). Load it with:
#   source <(lllm completion bash)        # in ~/.bashrc
__lllm_subcommands() {
  case "$1" in
${cases((entry) => entry.subcommands.join(" "))}
  esac
}
__lllm_options() {
  case "$1" in
${cases((entry) => entry.options.flatMap((option) => option.flags).join(" "))}
  esac
}
# What the value of option $2 of command $1 is: choices:…, model, dir, file, other (nothing: a flag).
__lllm_value() {
  case "$1/$2" in
${choiceCases}
  esac
}
# What the first positional argument of command $1 is: choices:…, or its name (tactic, dir, ref, …).
__lllm_argument() {
  case "$1" in
${argumentCases}
  esac
}
__lllm_files() {
  local IFS=$'\\n' item
  for item in $(compgen -f -- "$1"); do
    if [[ -d "$item" ]]; then COMPREPLY+=("$item/"); else case "$item" in *.yaml|*.yml|*.json) COMPREPLY+=("$item") ;; esac; fi
  done
}
_lllm() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" command="" word i positional=0 packages=()
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ "$word" == -* ]]; then continue; fi
    # The value of an option that takes one (-p DIR, --model NAME) is not a command word.
    if [[ -n "$(__lllm_value "$command" "\${COMP_WORDS[i-1]}")" ]]; then
      case "\${COMP_WORDS[i-1]}" in -p|--package) packages+=(-p "$word") ;; esac
      continue
    fi
    if [[ " $(__lllm_subcommands "$command") " == *" $word "* ]]; then
      command="\${command:+$command }$word"
    else
      positional=$((positional + 1))
    fi
  done
  local kind
  kind="$(__lllm_value "$command" "$prev")"
  if [[ -n "$kind" ]]; then
    case "$kind" in
      choices:*) COMPREPLY=($(compgen -W "\${kind#choices:}" -- "$cur")) ;;
      model) COMPREPLY=($(compgen -W "$(lllm completion --list models 2>/dev/null)" -- "$cur")) ;;
      dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
      file) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__lllm_options "$command")" -- "$cur"))
    return 0
  fi
  local subcommands
  subcommands="$(__lllm_subcommands "$command")"
  if [[ -n "$subcommands" && $positional -eq 0 ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
    [[ -z "$(__lllm_argument "$command")" ]] && return 0
  fi
  if [[ $positional -eq 0 ]]; then
    local argument
    argument="$(__lllm_argument "$command")"
    case "$argument" in
      choices:*) COMPREPLY+=($(compgen -W "\${argument#choices:}" -- "$cur")) ;;
      tactic) __lllm_files "$cur"; COMPREPLY+=($(compgen -W "$(lllm completion --list tactics "\${packages[@]}" 2>/dev/null)" -- "$cur")) ;;
      dir) COMPREPLY+=($(compgen -d -- "$cur")) ;;
      "") ;;
      *) COMPREPLY+=($(compgen -f -- "$cur")) ;;
    esac
  fi
  return 0
}
complete -o nospace -o default -F _lllm lllm 2>/dev/null || complete -F _lllm lllm
`;
}

export function zshScript(entries: CompletionEntry[]): string {
  return `# lllm completion for zsh (the bash completion, through bashcompinit). Load it with:
#   source <(lllm completion zsh)         # in ~/.zshrc, after compinit
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(entries).split("\n").slice(2).join("\n")}`;
}

export function fishScript(entries: CompletionEntry[]): string {
  const lines = ["# lllm completion for fish. Load it with:", "#   lllm completion fish > ~/.config/fish/completions/lllm.fish", "complete -c lllm -f"];
  const condition = (path: string): string => {
    if (path === "") return "__fish_use_subcommand";
    return path.split(" ").map((word) => `__fish_seen_subcommand_from ${word}`).join("; and ");
  };
  for (const entry of entries) {
    const inEntry = entry.path === "" ? "__fish_use_subcommand" : condition(entry.path);
    for (const sub of entry.subcommands) {
      const child = entries.find((candidate) => candidate.path === (entry.path === "" ? sub : `${entry.path} ${sub}`));
      const when = entry.path === "" ? "__fish_use_subcommand" : `${inEntry}; and not __fish_seen_subcommand_from ${entry.subcommands.join(" ")}`;
      lines.push(`complete -c lllm -n ${quote(when)} -a ${quote(sub)} -d ${quote(child?.description.slice(0, 80) ?? "")}`);
    }
    if (entry.path === "") continue;
    for (const option of entry.options) {
      const short = option.flags.find((flag) => /^-[^-]$/.test(flag));
      const long = option.flags.find((flag) => flag.startsWith("--"));
      let spec = `complete -c lllm -n ${quote(inEntry)}${short ? ` -s ${short.slice(1)}` : ""}${long ? ` -l ${long.slice(2)}` : ""}`;
      if (option.takesValue) {
        const kind = valueKind(option.flags);
        spec += option.choices ? ` -x -a ${quote(option.choices.join(" "))}` : kind === "model" ? ` -x -a ${quote("(lllm completion --list models 2>/dev/null)")}` : kind === "dir" ? ` -x -a ${quote("(__fish_complete_directories)")}` : " -r -F";
      }
      lines.push(`${spec} -d ${quote(option.description.slice(0, 80))}`);
    }
    if (entry.argument?.choices) lines.push(`complete -c lllm -n ${quote(inEntry)} -a ${quote(entry.argument.choices.join(" "))}`);
    else if (entry.argument?.name === "tactic") lines.push(`complete -c lllm -n ${quote(inEntry)} -F -a ${quote("(lllm completion --list tactics 2>/dev/null)")}`);
    else if (entry.argument) lines.push(`complete -c lllm -n ${quote(inEntry)} -F`);
  }
  return `${lines.join("\n")}\n`;
}
