import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../../config/displayPath.js";
import { ConfigError } from "../../errors.js";

/**
 * A link among the parts of a cassette's path lllm reads and writes itself (`__cassettes__`, the test file's folder
 * in it, the cassette) is refused: a repository could point `__cassettes__/x.test.yaml` anywhere on the machine,
 * and `--record` would write there (or a replay read from there).
 */
export function checkCassettePath(file: string, options: { checkedFolders?: Set<string> } = {}): void {
  const folder = path.dirname(file);
  if (!options.checkedFolders?.has(folder)) {
    if (!checkPart(path.dirname(folder)) || !checkPart(folder)) return; // not there yet: nothing below it is either
    options.checkedFolders?.add(folder);
  }
  checkPart(file);
}

/** Whether the part exists; a `ConfigError` when it is a symbolic link. */
function checkPart(part: string): boolean {
  let link: boolean;
  try {
    link = lstatSync(part).isSymbolicLink();
  } catch {
    return false;
  }
  if (link) {
    throw new ConfigError("test_cassette_invalid", `${displayPath(part)} is a symbolic link; lllm test does not follow links under __cassettes__`, {
      location: { file: displayPath(part) },
      hint: "Replace it with a real folder or file (cassettes are plain files, kept in the repository beside their test file).",
    });
  }
  return true;
}

/**
 * Write a cassette: its folders made one at a time and checked not to be links, the text written to a new temporary
 * file (`wx`: never through a file or link already there) and renamed into place, so that a reader never sees half
 * of it and a link planted at the cassette's name is replaced, not followed.
 */
export function writeCassetteText(file: string, text: string): void {
  const folder = path.dirname(file);
  for (const part of [path.dirname(folder), folder]) {
    try {
      mkdirSync(part);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  checkCassettePath(file);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { flag: "wx" });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
