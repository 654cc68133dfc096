import { ConfigError } from "../errors.js";

/**
 * Split a command line into words the way a POSIX shell would, without running a shell: whitespace separates
 * words, single quotes keep everything literally, double quotes keep spaces and honour `\"`, `\\`, `\$` and
 * `` \` ``, and a backslash outside quotes escapes the next character. No expansion of `$VAR`, `~` or globs.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && index + 1 < line.length && '"\\$`'.includes(line[index + 1]!)) word += line[++index]!;
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && index + 1 < line.length) {
      word += line[++index]!;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) throw new ConfigError("usage_command_line", `unterminated ${quote === "'" ? "single" : "double"} quote in \`${line}\``, { hint: "Close the quote, or pass the command after `--` as separate arguments." });
  if (inWord) words.push(word);
  return words;
}
