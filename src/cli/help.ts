import type * as Commander from "commander";
import { ConfigError } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { helpTopics, topicGuide } from "./helpTopics.js";
import { paint } from "./output.js";

/**
 * `lllm help [TOPIC | COMMAND...]`: a topic's page of the documentation (`lllm help batch`), a command's help
 * (`lllm help tools list`), or the program's help followed by the topics.
 */
export function helpCommand(words: string[], program: Commander.Command): void {
  const styles = { bold: (text: string) => paint("bold", text, process.stdout), dim: (text: string) => paint("dim", text, process.stdout) };
  const topics = helpTopics();
  if (words.length === 0) {
    program.outputHelp();
    const width = Math.max(0, ...Object.keys(topics).map((name) => name.length)) + 2;
    writeOwnStdout(`\nHelp topics (lllm help TOPIC), a page of the documentation each:\n${Object.entries(topics).map(([name, topic]) => `  ${name.padEnd(width)}${styles.dim(topic.what)}`).join("\n")}\n`);
    return;
  }
  // A topic first (`lllm help batch` is the guide; `lllm batch --help` the flags), then a command.
  const guide = words.length === 1 ? topicGuide(words[0]!, styles, topics) : undefined;
  if (guide !== undefined) {
    writeOwnStdout(guide);
    return;
  }
  let command: Commander.Command | undefined = program;
  for (const word of words) command = command?.commands.find((sub) => sub.name() === word || sub.aliases().includes(word));
  if (command) {
    command.outputHelp();
    return;
  }
  // Sub-commands by their whole path, so `lllm help tools cal` is offered `tools call`, not just `tools`.
  const known = [...Object.keys(topics), ...commandPaths(program)];
  const guess = didYouMean(words.join(" "), known);
  throw new ConfigError("usage_help_topic", `no help topic or command \`${words.join(" ")}\`${guess ? `: ${guess}` : ""}`, { hint: `Topics: ${Object.keys(topics).join(", ")}; or a command, as in lllm help run.` });
}

/** Every command under `command`, by its words after `lllm`: `run`, `tools`, `tools call`… */
function commandPaths(command: Commander.Command, prefix = ""): string[] {
  return command.commands.flatMap((sub) => [`${prefix}${sub.name()}`, ...commandPaths(sub, `${prefix}${sub.name()} `)]);
}
