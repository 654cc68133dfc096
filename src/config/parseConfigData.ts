import { yaml } from "../util/lazyYaml.js";
import { ConfigError } from "../errors.js";
import { parseYamlDocument } from "./parseYamlDocument.js";
import { firstLine } from "../util/firstLine.js";
import { readParsedYaml, storeParsedYaml } from "./parsedYamlCache.js";
import { CONFIG_LIMITS } from "./configLimits.js";
import { registerUrlCredentials } from "../util/redact.js";

/**
 * The plain data of a YAML (or JSON) config file whose positions are not needed (a prompt file, a tool
 * declaration, a manifest), parsed within `CONFIG_LIMITS` like every config file. Throws a `ConfigError`
 * (`config_parse`, `config_too_large`, `config_too_deep`) with the first problem and its line (an alias that
 * would make the data contain itself, or repeat too much, is one: see aliasProblems).
 */
export function parseConfigData(text: string, file: string): unknown {
  const cached = readParsedYaml(text);
  if (cached !== undefined) return registered(cached);
  const lineCounter = new yaml.LineCounter();
  const { document, problems } = parseYamlDocument(text, { file, lineCounter });
  const first = problems[0];
  if (first) {
    const { line, col } = lineCounter.linePos(first.offset);
    // Worded like the yaml library's own errors, which callers quote after "cannot parse …: ".
    const message = `${firstLine(first.message).replace(/:$/, "")} at line ${line}, column ${col}`;
    throw new ConfigError("config_parse", message, { location: { file, line, column: col } });
  }
  let data: unknown;
  try {
    data = document.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount });
  } catch (error) {
    throw new ConfigError("config_parse", `cannot expand the file's aliases: ${error instanceof Error ? error.message : String(error)}`, { location: { file } });
  }
  storeParsedYaml(text, data);
  return registered(data);
}

/** The data, once the passwords in its URLs are secrets that every printed or stored text is redacted of. */
function registered(data: unknown): unknown {
  registerUrlCredentials(data);
  return data;
}
