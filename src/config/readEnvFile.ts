import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { ConfigError } from "../errors.js";

/**
 * The variables of a dotenv file, parsed by Node's own parser (the one behind `node --env-file`): `NAME=value`
 * lines, `export NAME=value`, `#` comments, single, double and backtick quotes (a quoted value may span lines;
 * `\n` is a newline in double quotes only), an unquoted value ending at ` #`. An unreadable file is an error
 * naming the flag and the file; `malformed`: the lines Node's parser skipped that hold no `=` (see `linesWithoutValue`).
 */
export function readEnvFile(file: string): { vars: Record<string, string>; malformed: number[] } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a folder" : (error as Error).message;
    throw new ConfigError("usage_env_file", `--env-file ${file}: cannot read it (${reason})`, { hint: "give a dotenv file of NAME=value lines", cause: error });
  }
  return { vars: parseEnv(text) as Record<string, string>, malformed: linesWithoutValue(text) };
}

/**
 * The lines (1-based) Node's parser skips without a word: neither blank, nor a `#` comment, nor inside a quoted value
 * that spans lines, and without `=` (`OPENAI_API_KEY : sk-…`, a stray word). Only those: what has an `=` is Node's to read.
 */
function linesWithoutValue(text: string): number[] {
  const found: number[] = [];
  let quote: string | undefined;
  text.split(/\r?\n/).forEach((line, index) => {
    if (quote !== undefined) {
      if (line.includes(quote)) quote = undefined;
      return;
    }
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const equals = trimmed.indexOf("=");
    if (equals < 0) {
      found.push(index + 1);
      return;
    }
    const value = trimmed.slice(equals + 1).trimStart();
    const first = value[0];
    if ((first === '"' || first === "'" || first === "`") && value.indexOf(first, 1) < 0) quote = first;
  });
  return found;
}
