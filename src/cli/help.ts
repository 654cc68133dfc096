import type * as Commander from "commander";
import { ConfigError } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { HELP_TOPICS, topicGuide } from "./helpTopics.js";
import { paint } from "./output.js";

/**
 * `lllm help [TOPIC | COMMAND...]`: a topic's guide (from the README), a command's help (`lllm help tools list`),
 * or the program's help followed by the topics.
 */
export function helpCommand(words: string[], program: Commander.Command): void {
  const styles = { bold: (text: string) => paint("bold", text, process.stdout), dim: (text: string) => paint("dim", text, process.stdout) };
  if (words.length === 0) {
    program.outputHelp();
    writeOwnStdout(`\nHelp topics (lllm help TOPIC):\n${Object.entries(HELP_TOPICS).map(([name, what]) => `  ${name.padEnd(12)} ${styles.dim(what)}`).join("\n")}\n`);
    return;
  }
  // A topic first (`lllm help batch` is the guide; `lllm batch --help` the flags), then a command.
  const guide = words.length === 1 ? topicGuide(words[0]!, styles) : undefined;
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
  const known = [...Object.keys(HELP_TOPICS), ...program.commands.map((sub) => sub.name())];
  const guess = didYouMean(words.join(" "), known);
  throw new ConfigError("usage_help_topic", `no help topic or command \`${words.join(" ")}\`${guess ? `: ${guess}` : ""}`, { hint: `Topics: ${Object.keys(HELP_TOPICS).join(", ")}; or a command, as in lllm help run.` });
}
