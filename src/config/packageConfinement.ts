import path from "node:path";
import type { ConfigProblem, SourceLocation } from "../errors.js";
import { displayPath } from "./displayPath.js";
import { realOrResolved } from "../util/realPath.js";
import { isRemoteSource } from "./packageSource.js";

/**
 * The rule for a tactic that lives in an installed package: the files it names by path (`base:` and the folders of
 * `packages:`) stay inside its package. The consent `lllm add` asks for covers the package's own files alone: a
 * package of YAML tactics installs without a question, and a path out of it would load config, and through that
 * config code, that nobody saw (a folder another user may write to, a file planted in /tmp). Package refs
 * (`other.tactics:name`) and fetched sources (`npm:`, `git+`, `oci://`, `https://`, `file:` tarballs) go through the
 * project's lock, which holds only what was added, and are fine.
 */
export function confinementProblem(what: "base" | "package", target: string, folder: string, location: SourceLocation | undefined): ConfigProblem | undefined {
  if (!escapesFolder(what, target, folder)) return undefined;
  return {
    message: `${what === "base" ? "`base`" : "a `packages:` entry"} of a tactic in an installed package names ${displayPath(target)}, outside the package`,
    ...(location ? { location } : {}),
    hint: `An installed package runs only its own files, which were shown when it was added. Ask its author to ship the file in the package${what === "base" ? " or name it by ref (`pkg.tactics:name`)" : " or to name the package by its source (npm:, git+, oci://) so that it is added with its own consent"}; or copy the tactic into a folder of yours.`,
  };
}

/** Whether a `base:` path or a `packages:` entry (absolute already) lies outside `folder`. */
export function escapesFolder(what: "base" | "package", target: string, folder: string): boolean {
  if (what === "package" && isRemoteSource(target)) return false;
  // Links resolved, so that a link inside the package cannot point out of it.
  return !isInside(realOrResolved(target), realOrResolved(folder));
}

function isInside(target: string, folder: string): boolean {
  const relative = path.relative(folder, target);
  // `..` or `../…` is out; a name that merely starts with two dots (`..notes`) is in.
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
