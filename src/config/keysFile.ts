import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, type Stats, writeSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { realOrResolved } from "../util/realPath.js";
import { jsonErrorPosition } from "./jsonErrorPosition.js";
import { lllmHome } from "./lllmHome.js";

/** An environment variable's name: what a key is stored under, and what every reader of a key asks for. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `$LLLM_HOME/keys.json`: the keys `lllm keys set` keeps, a JSON object of variable name → value. */
export function keysFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(lllmHome(env), "keys.json");
}

/**
 * The keys kept in `file` (none when it does not exist). The file must be this user's alone: a keys file that the
 * group or others may read (or write) is refused, not used, with the command that fixes it, as ssh refuses a
 * private key others can read. Bad JSON, or a value that is not a string, is an error naming the file (in its
 * message: no `location`, which the CLI would print before it a second time).
 */
export function readKeys(file: string): Record<string, string> {
  let text: string;
  try {
    checkPrivate(file);
    text = readFileSync(file, "utf8");
  } catch (error) {
    // A link to a file that is not there (an encrypted volume not mounted, a dotfiles checkout moved) is not "no
    // keys": the keys the user stored are out of reach, and a run would go on to a missing-key error instead. (First:
    // a link to a folder others may list would otherwise be called a keys file others may read.)
    const broken = brokenLink(file, "no key could be read from it");
    if (broken) throw broken;
    if (error instanceof ConfigError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError("keys_file_invalid", `cannot read the keys file ${file}: ${(error as Error).message}`, { hint: "check that it is a file this user may read", cause: error });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // Never the parser's message: it quotes the text around the fault, which is part of a key.
    const position = jsonErrorPosition(text);
    throw new ConfigError("keys_file_invalid", `the keys file ${file} is not valid JSON${position ? ` (line ${position.line}, column ${position.column})` : ""}`, {
      hint: `fix it (a JSON object: {"OPENAI_API_KEY": "sk-…"}), or remove it and set the keys again with \`lllm keys set NAME\``,
    });
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ConfigError("keys_file_invalid", `the keys file ${file} must hold a JSON object of variable names and values`, { hint: `e.g. {"OPENAI_API_KEY": "sk-…"}` });
  }
  // Without a prototype: a name is one of the file's own entries, so `toString` is no key and `__proto__` is kept.
  const keys: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(data)) {
    if (!VARIABLE_NAME.test(name) || typeof value !== "string") {
      // A name that is not a variable name may be a key pasted in its place (`"OPENAI_API_KEY=sk-…"`): it is shown
      // by its line, never quoted, as a parse error never quotes the text around its fault.
      const line = lineOf(text, name);
      const entry = VARIABLE_NAME.test(name) ? `\`${name}\`${line ? ` (line ${line})` : ""}` : line ? `at line ${line}` : "whose name is not a variable name";
      throw new ConfigError("keys_file_invalid", `the keys file ${file} has a bad entry ${entry}: each key must be a variable name (letters, digits, _) with a string value`, {
        // Not \`lllm keys remove\`: it reads this same file, and stops on this same entry.
        hint: `edit the file (\`lllm keys path\` shows where): remove the entry, or give it a string value under a variable name`,
      });
    }
    keys[name] = value;
  }
  return keys;
}

/** The line where the entry `name` is written (a name as JSON.stringify writes it, then `:`; else unknown). */
function lineOf(text: string, name: string): number | undefined {
  const quoted = JSON.stringify(name).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const at = text.search(new RegExp(`${quoted}\\s*:`));
  return at < 0 ? undefined : text.slice(0, at).split("\n").length;
}

/**
 * Fill the variables `env` leaves unset (or empty) with the stored keys' values: the environment wins over the
 * keys file. Returns the names filled. What every command sees (applyEnvironment) and what `lllm doctor` reports.
 */
export function fillFromKeys(env: NodeJS.ProcessEnv, keys: Record<string, string>): Set<string> {
  const filled = new Set<string>();
  for (const [name, value] of Object.entries(keys)) {
    if ((environmentValue(env, name) ?? "") !== "") continue;
    env[name] = value;
    filled.add(name);
  }
  return filled;
}

/** A variable of `env`, looked up as its own: `process.env.constructor` is a function, not a variable someone set. */
export function environmentValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined;
}

/**
 * Write the keys to `file`, readable by this user alone (0600, in a folder created 0700): through a new file that
 * replaces the old one, so that a reader never sees half a file and no moment exists when the keys are readable
 * by others. When `file` is a link, the file it leads to is written and the link kept (see keysWriteTarget). An
 * empty set removes the file (a link's file is emptied instead: removing the link would leave the keys in it).
 */
export function writeKeys(file: string, keys: Record<string, string>): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const target = keysWriteTarget(file);
  if (Object.keys(keys).length === 0 && target === file) {
    rmSync(file, { force: true });
    return;
  }
  replaceFile(target, `${JSON.stringify(keys, null, 2)}\n`);
}

/**
 * Where writing the keys file lands: `file` itself, or, when `file` is a link (to an encrypted volume, a dotfiles
 * repository, a secrets mount), the file it leads to, so that the rename replaces that file and not the link. A link
 * to nothing, or to something that is not a regular file, is refused (and left as it is): writing there would
 * either replace the link or fail half-way. Called before a value is asked for, and again by writeKeys.
 */
export function keysWriteTarget(file: string): string {
  if (!lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) return file;
  const broken = brokenLink(file, "nothing was written");
  if (broken) throw broken;
  return realOrResolved(file);
}

/**
 * When `file` is a link that leads to nothing (or round a loop of links), or to something that is not a regular
 * file: the error that says so, ending with `consequence`. Otherwise (a plain file, no file, a good link) undefined.
 */
function brokenLink(file: string, consequence: string): ConfigError | undefined {
  if (!lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) return undefined;
  const target = followedStat(file);
  const destination = readlinkSync(file);
  if (target === undefined) {
    // `{}`, not an empty file: an empty file is not JSON, and would be refused next.
    const missing = path.resolve(path.dirname(file), destination);
    return new ConfigError("keys_file_link", `the keys file ${file} is a link to ${destination}, which does not exist (or is a loop of links): ${consequence}`, {
      hint: `create that file (printf '{}' > ${missing} && chmod 600 ${missing}), point the link at an existing file, or remove the link to keep the keys in ${file} itself`,
    });
  }
  if (!target.isFile()) {
    return new ConfigError("keys_file_link", `the keys file ${file} is a link to ${destination}, which is not a regular file: ${consequence}`, {
      hint: `point the link at a file, or remove the link to keep the keys in ${file} itself`,
    });
  }
  return undefined;
}

/** The stat of what a link leads to; undefined when nothing is there, or the links go round in a loop. */
function followedStat(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") return undefined;
    throw error;
  }
}

/**
 * Replace `file` with `text`: written to an exclusive temporary file beside it (in its folder, so the rename stays
 * on one file system), 0600 from its creation, synced, then renamed over it.
 */
function replaceFile(file: string, text: string): void {
  const partial = `${file}.${process.pid}.tmp`;
  const fd = openSync(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/** Refuse a keys file that someone else may read or write (not on Windows, which has no such modes). */
function checkPrivate(file: string): void {
  const stat = statSync(file);
  if (process.platform === "win32") return;
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigError("keys_file_permissions", `the keys file ${file} may be read by others (mode ${mode.toString(8).padStart(4, "0")}): lllm does not use keys others can read`, {
      hint: `make it yours alone: chmod 600 ${file}`,
    });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new ConfigError("keys_file_permissions", `the keys file ${file} belongs to another user (uid ${stat.uid}): lllm does not use keys someone else may change`, {
      hint: `remove it, or set LLLM_HOME to a folder of your own`,
    });
  }
}
