import type { CompletionEntry } from "./completionData.js";

const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;

/** A shell command that prints `words` one a line (`:`, a no-op, for none). */
const lines = (words: readonly string[]): string => (words.length === 0 ? ":" : `printf '%s\\n' ${words.map(quote).join(" ")}`);

/** One `case` arm a line: `'PATTERN') COMMAND ;;`. */
const arms = (pairs: Array<[string, string]>): string => pairs.map(([pattern, command]) => `    ${quote(pattern)}) ${command} ;;`).join("\n");

/**
 * The bash script (zsh runs the same function through bashcompinit). The command tree is written into case
 * statements; models, package refs and run ids come from `lllm completion --list …` when asked for, so they follow
 * the installed lllm, the packages given with -p and the run store.
 *
 * Every word offered goes into COMPREPLY as it is, never through `compgen -W`: that expands `$(…)`, backquotes,
 * variables and globs in its words, and a word here may be the name of any file in a package (a tactic named
 * `$(touch x).yaml` ran `touch` when completed).
 */
export function bashScript(entries: CompletionEntry[]): string {
  const values = entries.flatMap((entry) => entry.options.filter((option) => option.takesValue).flatMap((option) => option.flags.map((flag) => ({ key: `${entry.path}/${flag}`, option }))));
  const argumentsOf = entries.flatMap((entry) => (entry.argument ? [{ path: entry.path, argument: entry.argument }] : []));
  return `# lllm completion for bash. Load it with:
#   source <(lllm completion bash)        # in ~/.bashrc
${BASH_HEADER}
# The subcommands of command $1 ('' for lllm itself), one a line.
__lllm_subcommands() {
  case "$1" in
${arms(entries.map((entry) => [entry.path, lines(entry.subcommands)]))}
  esac
}
# The flags of command $1, one a line.
__lllm_options() {
  case "$1" in
${arms(entries.map((entry) => [entry.path, lines(entry.options.flatMap((option) => option.flags))]))}
  esac
}
# What the value of flag $2 of command $1 is: choices, model, tactic, run, dir, file or other (nothing: a flag).
__lllm_value() {
  case "$1/$2" in
${arms(values.map(({ key, option }) => [key, `echo ${option.value}`]))}
  esac
}
# The choices of flag $2 of command $1, one a line.
__lllm_value_choices() {
  case "$1/$2" in
${arms(values.filter(({ option }) => option.choices).map(({ key, option }) => [key, lines(option.choices!)]))}
  esac
}
# What the first argument of command $1 is (as for a flag's value); nothing: it takes none.
__lllm_argument() {
  case "$1" in
${arms(argumentsOf.map(({ path, argument }) => [path, `echo ${argument.kind}`]))}
  esac
}
# The choices of the first argument of command $1, one a line.
__lllm_argument_choices() {
  case "$1" in
${arms(argumentsOf.filter(({ argument }) => argument.choices).map(({ path, argument }) => [path, lines(argument.choices!)]))}
  esac
}
${BASH_BODY}`;
}

/** The functions that do not depend on the command tree. */
const BASH_HEADER = `# Each word offered goes into COMPREPLY as it is, never through \`compgen -W\`, which expands $(…), backquotes,
# variables and globs in its words: file names and package refs may hold any of them.`;

const BASH_BODY = `# Add the lines of $1 that start with $2 to COMPREPLY, as they are.
__lllm_add() {
  local word
  while IFS= read -r word; do
    [[ -n "$word" && "$word" == "$2"* ]] && COMPREPLY+=("$word")
  done <<<"$1"
}
# Folders and files starting with $1; with $2 = tactic, only YAML and JSON files.
__lllm_files() {
  local item
  # Insert names quoted: a $, a space or a quote in a file name stays part of the name.
  type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null
  while IFS= read -r item; do
    if [[ -z "$item" ]]; then continue; fi
    if [[ -d "$item" ]]; then
      COMPREPLY+=("$item/")
    elif [[ "$2" != dir ]]; then
      case "$2/$item" in tactic/*.yaml|tactic/*.yml|tactic/*.json|file/*) COMPREPLY+=("$item") ;; esac
    fi
  done <<<"$(compgen -f -- "$1")"
}
# Complete $2 as a word of kind $1 (choices: the lines of $3).
__lllm_complete() {
  case "$1" in
    choices) __lllm_add "$3" "$2" ;;
    model) __lllm_add "$(lllm completion --list models 2>/dev/null)" "$2" ;;
    run) __lllm_add "$(lllm completion --list runs 2>/dev/null)" "$2" ;;
    tactic) __lllm_files "$2" tactic; __lllm_add "$(lllm completion --list tactics "\${packages[@]}" 2>/dev/null)" "$2" ;;
    dir|file) __lllm_files "$2" "$1" ;;
  esac
}
# The word $1 as the command will get it: quotes and backslashes removed (bash inserts names quoted, and a
# colon escaped: \\:). Nothing is expanded.
__lllm_dequote() {
  local in="$1" out="" c quote=""
  while [[ -n "$in" ]]; do
    c="\${in:0:1}"
    in="\${in:1}"
    if [[ -n "$quote" && "$c" == "$quote" ]]; then
      quote=""
    elif [[ "$c" == "\\\\" && "$quote" != "'" && -n "$in" ]]; then
      out="$out\${in:0:1}"
      in="\${in:1}"
    elif [[ -z "$quote" && ( "$c" == "'" || "$c" == '"' ) ]]; then
      quote="$c"
    else
      out="$out$c"
    fi
  done
  printf '%s' "$out"
}
# bash splits a word at the characters of COMP_WORDBREAKS, ':' among them: \`weather.tactics:w\` arrives as three
# words. Join the pieces again where nothing separates them on the line, so that a package ref is one word
# (into __lllm_line; the word at the cursor is __lllm_line[__lllm_index], of which bash replaces __lllm_piece).
__lllm_words() {
  local line="$COMP_LINE" i word rest last
  for ((i = 0; i < \${#COMP_WORDS[@]}; i++)); do
    word="\${COMP_WORDS[i]}"
    rest="\${line#"\${line%%[![:space:]]*}"}"
    last=$((\${#__lllm_line[@]} - 1))
    if ((i > 0)) && [[ "$rest" == "$line" ]] && [[ "$word" == :* || "\${__lllm_line[last]}" == *: ]]; then
      __lllm_line[last]="\${__lllm_line[last]}$word"
    else
      __lllm_line+=("$word")
    fi
    line="\${rest#"$word"}"
    if ((i == COMP_CWORD)); then
      __lllm_index=$((\${#__lllm_line[@]} - 1))
      __lllm_piece="$word"
    fi
  done
}
# bash replaces only the piece of the word after the last ':' it split at (nothing, when the cursor is just
# after one): offer that piece. No space after a folder or a provider prefix (\`anthropic/\`): the word goes on.
__lllm_finish() {
  local i prefix piece
  piece="$(__lllm_dequote "$__lllm_piece")"
  if [[ -n "$__lllm_piece" && -z "\${__lllm_piece//:/}" ]]; then piece=""; fi
  if [[ "$piece" != "$1" && "$1" == *"$piece" ]]; then
    prefix="\${1%"$piece"}"
    for ((i = 0; i < \${#COMPREPLY[@]}; i++)); do COMPREPLY[i]="\${COMPREPLY[i]#"$prefix"}"; done
  fi
  if ((\${#COMPREPLY[@]} == 1)) && [[ "\${COMPREPLY[0]}" == */ ]] && type compopt >/dev/null 2>&1; then compopt -o nospace 2>/dev/null; fi
}
_lllm() {
  local __lllm_line=() __lllm_index=0 __lllm_piece=""
  __lllm_words
  local cur prev="" command="" word i positional=0 packages=() kind argument nl=$'\\n'
  cur="$(__lllm_dequote "\${__lllm_line[__lllm_index]}")"
  if ((__lllm_index > 0)); then prev="\${__lllm_line[__lllm_index-1]}"; fi
  COMPREPLY=()
  for ((i = 1; i < __lllm_index; i++)); do
    word="\${__lllm_line[i]}"
    if [[ "$word" == -* ]]; then continue; fi
    # The value of a flag that takes one (-p DIR, --model NAME) is not a command word.
    if [[ -n "$(__lllm_value "$command" "\${__lllm_line[i-1]}")" ]]; then
      word="$(__lllm_dequote "$word")"
      case "\${__lllm_line[i-1]}" in -p|--package) packages+=(-p "\${word/#\\~\\//$HOME/}") ;; esac
      continue
    fi
    if [[ "$nl$(__lllm_subcommands "$command")$nl" == *"$nl$word$nl"* ]]; then
      command="\${command:+$command }$word"
    else
      positional=$((positional + 1))
    fi
  done
  kind="$(__lllm_value "$command" "$prev")"
  if [[ -n "$kind" ]]; then
    __lllm_complete "$kind" "$cur" "$(__lllm_value_choices "$command" "$prev")"
  elif [[ "$cur" == -* ]]; then
    __lllm_add "$(__lllm_options "$command")" "$cur"
  elif ((positional == 0)); then
    __lllm_add "$(__lllm_subcommands "$command")" "$cur"
    argument="$(__lllm_argument "$command")"
    if [[ -n "$argument" ]]; then __lllm_complete "$argument" "$cur" "$(__lllm_argument_choices "$command")"; fi
  fi
  __lllm_finish "$cur"
  return 0
}
complete -o default -F _lllm lllm
`;

export function zshScript(entries: CompletionEntry[]): string {
  return `# lllm completion for zsh (the bash completion, through bashcompinit). Load it with:
#   source <(lllm completion zsh)         # in ~/.zshrc, after compinit
# It does not run compinit itself: that is the .zshrc's to do, once, with its own options.
if (( ! $+functions[compdef] )); then
  print -u2 "lllm completion: load it after compinit (autoload -Uz compinit && compinit, in ~/.zshrc)"
  return 1
fi
autoload -U +X bashcompinit && bashcompinit
${bashScript(entries).split("\n").slice(2).join("\n")}`;
}

export function fishScript(entries: CompletionEntry[]): string {
  const out = [
    "# lllm completion for fish. Load it with:",
    "#   lllm completion fish > ~/.config/fish/completions/lllm.fish",
    "complete -c lllm -f",
    "# The package refs of the tactics lllm finds here and in the packages given with -p / --package.",
    "function __lllm_tactics",
    "    set -l words (commandline -opc)",
    "    set -l packages",
    "    for i in (seq 2 (count $words))",
    "        if contains -- $words[(math $i - 1)] -p --package",
    "            set -a packages -p $words[$i]",
    "        end",
    "    end",
    "    lllm completion --list tactics $packages 2>/dev/null",
    "end",
  ];
  const condition = (path: string): string => (path === "" ? "__fish_use_subcommand" : path.split(" ").map((word) => `__fish_seen_subcommand_from ${word}`).join("; and "));
  const candidates = (kind: string, choices: readonly string[] | undefined): string => {
    if (kind === "choices") return ` -x -a ${quote((choices ?? []).join(" "))}`;
    if (kind === "model") return ` -x -a ${quote("(lllm completion --list models 2>/dev/null)")}`;
    if (kind === "run") return ` -x -a ${quote("(lllm completion --list runs 2>/dev/null)")}`;
    if (kind === "tactic") return ` -F -a ${quote("(__lllm_tactics)")}`;
    if (kind === "dir") return ` -x -a ${quote("(__fish_complete_directories)")}`;
    return " -F";
  };
  for (const entry of entries) {
    const inEntry = condition(entry.path);
    for (const sub of entry.subcommands) {
      const child = entries.find((candidate) => candidate.path === (entry.path === "" ? sub : `${entry.path} ${sub}`));
      const when = entry.path === "" ? inEntry : `${inEntry}; and not __fish_seen_subcommand_from ${entry.subcommands.join(" ")}`;
      out.push(`complete -c lllm -n ${quote(when)} -a ${quote(sub)} -d ${quote(child?.description.slice(0, 80) ?? "")}`);
    }
    if (entry.path === "") continue;
    for (const option of entry.options) {
      const short = option.flags.find((flag) => /^-[^-]$/.test(flag));
      const long = option.flags.find((flag) => flag.startsWith("--"));
      let spec = `complete -c lllm -n ${quote(inEntry)}${short ? ` -s ${short.slice(1)}` : ""}${long ? ` -l ${long.slice(2)}` : ""}`;
      if (option.takesValue) spec += option.value === "other" || option.value === "file" ? " -r -F" : candidates(option.value, option.choices);
      out.push(`${spec} -d ${quote(option.description.slice(0, 80))}`);
    }
    // Where a command has subcommands, its argument is offered once none is given.
    const argumentWhen = entry.subcommands.length > 0 ? `${inEntry}; and not __fish_seen_subcommand_from ${entry.subcommands.join(" ")}` : inEntry;
    if (entry.argument) out.push(`complete -c lllm -n ${quote(argumentWhen)}${candidates(entry.argument.kind, entry.argument.choices)}`);
  }
  return `${out.join("\n")}\n`;
}
