import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { ConfigError, PackageFetchError } from "../../errors.js";
import type { GitSource } from "../../config/packageSource.js";
import type { LockEntry } from "../../registry/installed/lockFile.js";
import { PACKAGE_LIMITS } from "../limits.js";
import { maskUrlCredentials } from "../../util/urlCredentials.js";
import { nameFrom, type Fetched, type FetchContext } from "./Fetched.js";

const COMMIT = /^[0-9a-f]{40}$/;

/**
 * A package from a git repository, with git itself: the ref resolved to a commit (`git ls-remote`), that commit
 * fetched alone into an empty bare repository, and its tree (or the sub-folder's) taken with `git archive`. No
 * checkout, no hook, no submodule and no npm `prepare` script runs: nothing of the repository executes. Only
 * file://, https:// and ssh:// transports are allowed, and git never prompts (a script waits on no password).
 */
export async function fetchGit(source: GitSource, context: FetchContext, locked?: LockEntry): Promise<Fetched> {
  const commit = locked?.commit ?? (await resolveRef(source));
  const repository = mkdtempSync(path.join(context.scratch(), "git-"));
  await git(["init", "--bare", "--quiet", repository], source);
  await git(["-C", repository, "fetch", "--quiet", "--depth", "1", "--no-tags", source.url, commit], source).catch(async () => {
    // A server that does not serve commits by id: fetch its refs and look for it.
    await git(["-C", repository, "fetch", "--quiet", "--no-tags", source.url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], source);
  });
  await git(["-C", repository, "cat-file", "-e", `${commit}^{commit}`], source).catch(() => {
    throw new ConfigError("package_version_not_found", `${displayUrl(source.url)} has no commit ${commit}`, { hint: "The lock pins a commit the repository no longer has (a force-push?): run `lllm update` to lock what the ref gives now." });
  });
  const tree = source.subdir === undefined ? commit : `${commit}:${source.subdir}`;
  if (source.subdir !== undefined) {
    const kind = await git(["-C", repository, "cat-file", "-t", tree], source).then((output) => output.toString("utf8").trim(), () => "none");
    if (kind !== "tree") {
      throw new ConfigError("package_source_invalid", `${displayUrl(source.url)} has no folder \`${source.subdir}\` at ${commit.slice(0, 12)}`, { hint: "Write the sub-folder after the ref: git+URL#REF:path/to/package." });
    }
  }
  const archive = await git(["-C", repository, "archive", "--format=tar", tree], source);
  const last = source.subdir?.split("/").at(-1) ?? path.basename(new URL(source.url).pathname).replace(/\.git$/, "");
  return { archive, stripTopFolder: false, fields: { resolved: source.url, commit }, defaultName: nameFrom(last) };
}

/** The commit a ref names on the remote: a branch, a tag (peeled), HEAD, or a commit id as is. */
export async function resolveRef(source: GitSource): Promise<string> {
  if (source.ref !== undefined && COMMIT.test(source.ref)) return source.ref;
  const listing = (await git(["ls-remote", source.url], source)).toString("utf8");
  const refs = new Map(listing.split("\n").filter(Boolean).map((line) => {
    const [sha, name] = line.split("\t");
    return [name!, sha!] as const;
  }));
  const wanted = source.ref ?? "HEAD";
  const commit = source.ref === undefined ? refs.get("HEAD") : refs.get(`refs/tags/${wanted}^{}`) ?? refs.get(`refs/tags/${wanted}`) ?? refs.get(`refs/heads/${wanted}`);
  if (commit !== undefined) return commit;
  const names = [...refs.keys()].filter((name) => /^refs\/(?:heads|tags)\//.test(name) && !name.endsWith("^{}")).map((name) => name.replace(/^refs\/(?:heads|tags)\//, ""));
  throw new ConfigError("package_version_not_found", `${displayUrl(source.url)} has no branch or tag \`${wanted}\``, { hint: names.length > 0 ? `Its branches and tags: ${names.slice(0, 12).join(", ")}.` : "It has no branches or tags." });
}

/** Run git with no terminal prompt and only the allowed transports; its output, or a PackageFetchError with its message. */
function git(args: string[], source: GitSource): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=always", ...args],
      {
        encoding: "buffer",
        maxBuffer: PACKAGE_LIMITS.archiveBytes * 2,
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_ALLOW_PROTOCOL: "file:https:ssh", GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? "ssh -o BatchMode=yes" },
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return reject(new ConfigError("package_fetch_failed", "git is not installed: git+ sources need it", { hint: "Install git (apt-get install git, brew install git), or use an npm, OCI or tarball source." }));
        const said = stderr.toString("utf8").split("\n").map((line) => line.replace(/^(?:fatal|error): /, "").trim()).find(Boolean) ?? error.message;
        reject(new PackageFetchError("package_fetch_failed", `git could not fetch ${displayUrl(source.url)}: ${maskUrlCredentials(said)}`, { hint: "Check the URL and your access to the repository (git uses your own credentials and SSH keys). Packages already installed keep working from the cache." }));
      },
    );
  });
}

/** A URL as messages show it: its userinfo masked, as everywhere else (`https://[redacted]@host/repo.git`). */
function displayUrl(url: string): string {
  return maskUrlCredentials(url);
}
