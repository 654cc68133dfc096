import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { ConfigError } from "../errors.js";

/**
 * The variables of a dotenv file, parsed by Node's own parser (the one behind `node --env-file`): `NAME=value`
 * lines, `export NAME=value`, `#` comments, single, double and backtick quotes (a quoted value may span lines;
 * `\n` is a newline in double quotes only), an unquoted value ending at ` #`. An unreadable file is an error
 * naming the flag and the file.
 */
export function readEnvFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a folder" : (error as Error).message;
    throw new ConfigError("usage_env_file", `--env-file ${file}: cannot read it (${reason})`, { hint: "give a dotenv file of NAME=value lines", cause: error });
  }
  return parseEnv(text) as Record<string, string>;
}
