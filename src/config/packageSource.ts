import path from "node:path";
import { ConfigError, type SourceLocation } from "../errors.js";

/** An npm package whose tarball is an lllm package: `npm:NAME[@RANGE]`. */
export interface NpmSource {
  kind: "npm";
  text: string;
  /** The npm name, `@scope/name` included. */
  name: string;
  /** A semver range, a version or a dist-tag; undefined: the `latest` tag. */
  range?: string;
}

/** A git repository: `git+URL[#REF][:SUBDIR]` (a ref name never holds a `:`, as git forbids it). */
export interface GitSource {
  kind: "git";
  text: string;
  /** The URL git is given (`file:///…`, `https://…`, `ssh://…`). */
  url: string;
  /** A branch, a tag or a commit; undefined: the remote's HEAD. */
  ref?: string;
  /** A folder inside the repository that is the package. */
  subdir?: string;
}

/** An OCI artifact: `oci://REGISTRY/REPO:TAG` or `oci://REGISTRY/REPO@sha256:…`. */
export interface OciSource {
  kind: "oci";
  text: string;
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

/** A tarball: an `https://` URL, or a `.tgz` / `.tar.gz` / `.tar` file (`file:` in the lock). */
export interface TarballSource {
  kind: "tarball";
  text: string;
  url?: string;
  /** The file, absolute once resolved against the folder that named it. */
  file?: string;
}

export type RemoteSource = NpmSource | GitSource | OciSource | TarballSource;

const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const TARBALL_FILE = /\.(?:tgz|tar\.gz|tar)$/i;
const GIT_SCHEMES = ["file:", "https:", "http:", "ssh:"];
const DIGEST = /^sha256:[a-f0-9]{64}$/;

/** True when `text` names a package to fetch rather than a folder. */
export function isRemoteSource(text: string): boolean {
  return /^(?:npm:|git\+|oci:\/\/|https?:\/\/|file:)/.test(text) || TARBALL_FILE.test(text);
}

/**
 * What a package entry names: a remote source, or undefined for a plain folder (the only kind before packages
 * could be shared). A remote source that is written wrong is a ConfigError naming the entry and the right form.
 * `from` is the folder relative tarball paths are resolved against.
 */
export function parsePackageSource(text: string, options: { from?: string; location?: SourceLocation } = {}): RemoteSource | undefined {
  if (!isRemoteSource(text)) return undefined;
  const fail = (what: string, hint: string): never => {
    throw new ConfigError("package_source_invalid", `package source \`${text}\`: ${what}`, { ...(options.location ? { location: options.location } : {}), hint });
  };
  if (text.startsWith("npm:")) {
    const rest = text.slice(4);
    const at = rest.indexOf("@", 1);
    const name = at < 0 ? rest : rest.slice(0, at);
    const range = at < 0 ? undefined : rest.slice(at + 1).trim();
    if (!NPM_NAME.test(name)) fail(`\`${name}\` is not an npm package name`, "Write npm:NAME or npm:NAME@RANGE, e.g. npm:@acme/weather@^1.2.0 (names are lower case).");
    if (range === "") fail("the version range after `@` is empty", "Write npm:NAME@RANGE, e.g. npm:weather@^1.2.0, or leave out `@` for the latest version.");
    return { kind: "npm", text, name, ...(range !== undefined ? { range } : {}) };
  }
  if (text.startsWith("git+")) {
    const rest = text.slice(4);
    const hash = rest.indexOf("#");
    const url = hash < 0 ? rest : rest.slice(0, hash);
    const fragment = hash < 0 ? "" : rest.slice(hash + 1);
    const colon = fragment.indexOf(":");
    const ref = colon < 0 ? fragment : fragment.slice(0, colon);
    const subdir = colon < 0 ? "" : fragment.slice(colon + 1).replace(/^\/+|\/+$/g, "");
    let scheme = "";
    try {
      const parsed = new URL(url);
      scheme = parsed.protocol;
      // A token in the address (https://x-access-token:…@host, or https://TOKEN@host) would be written into lllm.toml
      // and lllm.lock; ssh's user (ssh://git@host) is no secret.
      if (parsed.password !== "" || (parsed.protocol.startsWith("http") && parsed.username !== "")) {
        parsed.username = parsed.protocol.startsWith("http") ? "" : parsed.username;
        parsed.password = "";
        throw new ConfigError("package_source_invalid", `package source \`git+${parsed.toString()}${hash < 0 ? "" : `#${fragment}`}\` was given with a password or token in its address: lllm would write it into lllm.toml and lllm.lock`, {
          ...(options.location ? { location: options.location } : {}),
          hint: "Give git the credentials its own way (a credential helper, an SSH key: git+ssh://git@host/repo.git), not in the address.",
        });
      }
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      fail("the part after `git+` is not a URL", "Write git+file:///path/to/repo, git+https://host/repo.git or git+ssh://git@host/repo.git, then optionally #REF and :SUBDIR.");
    }
    if (!GIT_SCHEMES.includes(scheme)) fail(`git over \`${scheme}\` is not supported`, "Use a file://, https:// or ssh:// URL.");
    if (subdir.split("/").some((part) => part === ".." || part === ".")) fail("the sub-folder may not hold `.` or `..`", "Name a folder inside the repository, e.g. #main:packages/weather.");
    return { kind: "git", text, url, ...(ref !== "" ? { ref } : {}), ...(subdir !== "" ? { subdir } : {}) };
  }
  if (text.startsWith("oci://")) {
    const rest = text.slice(6);
    const slash = rest.indexOf("/");
    if (slash <= 0) fail("no repository after the registry", "Write oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:DIGEST, e.g. oci://ghcr.io/acme/weather:1.0.0.");
    const registry = rest.slice(0, slash);
    let repository = rest.slice(slash + 1);
    let tag: string | undefined;
    let digest: string | undefined;
    const at = repository.indexOf("@");
    if (at >= 0) {
      digest = repository.slice(at + 1);
      repository = repository.slice(0, at);
      if (!DIGEST.test(digest)) fail(`\`${digest}\` is not a sha256 digest`, "Write @sha256: and 64 hexadecimal digits.");
    } else {
      const colon = repository.lastIndexOf(":");
      if (colon >= 0) {
        tag = repository.slice(colon + 1);
        repository = repository.slice(0, colon);
      }
    }
    if (!/^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/.test(repository)) fail(`\`${repository}\` is not a repository name`, "Repository names are lower case: letters, digits, `.`, `_`, `-` and `/`.");
    if (tag !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(tag)) fail(`\`${tag}\` is not a tag`, "A tag is letters, digits, `_`, `.` and `-`.");
    if (tag === undefined && digest === undefined) tag = "latest";
    return { kind: "oci", text, registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
  }
  if (/^https?:\/\//.test(text)) {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      fail("not a valid URL", "Write the tarball's full https:// address.");
    }
    if (url!.username !== "" || url!.password !== "") {
      // Said without the secret: the source is written to the manifest and the lock, and shown in messages.
      url!.username = "";
      url!.password = "";
      throw new ConfigError("package_source_invalid", `package source \`${url!.toString()}\` was given with a user name or password in its address: lllm would write it into lllm.toml and lllm.lock`, {
        ...(options.location ? { location: options.location } : {}),
        hint: "Serve the archive without credentials in its address, or publish the package to an npm registry (its token stays in .npmrc) or an OCI registry (`docker login`).",
      });
    }
    return { kind: "tarball", text, url: text };
  }
  const file = text.startsWith("file:") ? text.slice(5) : text;
  return { kind: "tarball", text, file: path.resolve(options.from ?? process.cwd(), file) };
}

/**
 * The key of a source in `lllm.lock`: the text as written, but a tarball file as a `file:` path relative to the
 * project (so that the lock means the same on another machine, and a tactic's absolute path finds it).
 */
export function sourceKey(source: RemoteSource, projectDir: string): string {
  if (source.kind !== "tarball" || source.file === undefined) return source.text;
  return `file:${path.relative(projectDir, source.file).split(path.sep).join("/")}`;
}

/**
 * A `packages:` entry (or `--package` flag) made absolute against `folder`: a folder or a tarball file is resolved,
 * a source fetched by address (npm, git, OCI, https) is kept as written.
 */
export function resolvePackageEntry(entry: string, folder: string): string {
  if (/^(?:https?:\/\/|npm:|git\+|oci:\/\/)/.test(entry)) return entry;
  if (entry.startsWith("file:")) return `file:${path.resolve(folder, entry.slice(5))}`;
  return path.resolve(folder, entry);
}
