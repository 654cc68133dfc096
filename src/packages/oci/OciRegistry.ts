import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { ConfigError, PackageFetchError } from "../../errors.js";
import { registerSecret } from "../../util/redact.js";
import { httpRequest, type HttpAnswer } from "../httpRequest.js";
import { PACKAGE_LIMITS } from "../limits.js";
import { OCI_MEDIA_TYPES, type OciManifest } from "./ociMediaTypes.js";

/** Hosts spoken to over plain HTTP (as Docker does): this machine's. */
const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/**
 * A client of one repository of an OCI registry, over the distribution API: manifests and blobs, each checked
 * against its sha256 digest. Credentials are Docker's (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`,
 * `auths.<registry>.auth`), used for the registry's own token service or basic auth; they never follow a redirect
 * to another origin (blob stores) and never appear in a message. A registry on the loopback address is spoken to
 * over plain HTTP, as Docker does; every other over HTTPS.
 */
export class OciRegistry {
  private readonly base: string;
  private token: string | undefined;
  private readonly basic: string | undefined;

  constructor(
    readonly registry: string,
    readonly repository: string,
  ) {
    const host = registry.replace(/:\d+$/, "");
    this.base = `${LOOPBACK.includes(host) ? "http" : "https"}://${registry}/v2/${repository}`;
    this.basic = dockerCredentials(registry);
  }

  /** The manifest of a tag or digest, its bytes checked against the digest, and that digest. */
  async manifest(reference: string): Promise<{ manifest: OciManifest; digest: string }> {
    const answer = await this.request("GET", `/manifests/${reference}`, { headers: { accept: OCI_MEDIA_TYPES.manifest }, maxBytes: 4 * 1024 * 1024 });
    if (answer.status === 404) {
      const tags = await this.tags().catch(() => [] as string[]);
      throw new ConfigError("package_version_not_found", `oci://${this.registry}/${this.repository} has no \`${reference}\``, { hint: tags.length > 0 ? `Its tags: ${tags.slice(0, 12).join(", ")}.` : "The repository has no tags (or does not exist)." });
    }
    this.expectOk(answer, `the manifest ${reference}`);
    const digest = sha256(answer.body);
    if (reference.startsWith("sha256:") && digest !== reference) throw this.tampered(`the manifest ${reference}`, digest);
    let manifest: OciManifest;
    try {
      manifest = JSON.parse(answer.body.toString("utf8")) as OciManifest;
    } catch {
      throw new PackageFetchError("package_fetch_failed", `oci://${this.registry}/${this.repository}:${reference}: the manifest is not JSON`);
    }
    const layers = Array.isArray(manifest.layers) ? manifest.layers : [];
    if (manifest.artifactType !== OCI_MEDIA_TYPES.artifact && manifest.config?.mediaType !== OCI_MEDIA_TYPES.config) {
      throw new ConfigError("package_source_invalid", `oci://${this.registry}/${this.repository}:${reference} is not an lllm package (artifact type ${manifest.artifactType ?? manifest.config?.mediaType ?? "none"})`, { hint: `Publish packages with \`lllm publish --to oci://…\`: their artifact type is ${OCI_MEDIA_TYPES.artifact}.` });
    }
    if (layers.length !== 1 || layers[0]!.mediaType !== OCI_MEDIA_TYPES.layer) {
      throw new ConfigError("package_archive_invalid", `oci://${this.registry}/${this.repository}:${reference} must have one layer of type ${OCI_MEDIA_TYPES.layer}`, { hint: "Publish it again with `lllm publish --to oci://…`." });
    }
    return { manifest, digest };
  }

  /** A blob, checked against its digest and size. */
  async blob(digest: string, size: number): Promise<Buffer> {
    if (size > PACKAGE_LIMITS.archiveBytes) throw new ConfigError("package_too_large", `the layer ${digest} is ${size} bytes: more than a package may be`, { hint: "Keep large data out of packages." });
    const answer = await this.request("GET", `/blobs/${digest}`, { maxBytes: PACKAGE_LIMITS.archiveBytes });
    this.expectOk(answer, `the blob ${digest}`);
    const actual = sha256(answer.body);
    if (actual !== digest || answer.body.length !== size) throw this.tampered(`the layer ${digest}`, actual);
    return answer.body;
  }

  /** Upload a blob unless the registry has it (a monolithic upload: POST, then PUT with the digest). */
  async pushBlob(data: Buffer): Promise<string> {
    const digest = sha256(data);
    if ((await this.request("HEAD", `/blobs/${digest}`, { maxBytes: 0 })).status === 200) return digest;
    const started = await this.request("POST", "/blobs/uploads/", { maxBytes: 64 * 1024 });
    const location = started.headers.get("location");
    if (started.status !== 202 || location === null) throw this.failure(started, "starting an upload");
    const target = new URL(location, started.url);
    target.searchParams.set("digest", digest);
    const put = await this.request("PUT", target.toString(), { body: data, headers: { "content-type": "application/octet-stream" }, maxBytes: 64 * 1024 });
    if (put.status !== 201) throw this.failure(put, `uploading ${digest}`);
    return digest;
  }

  /** Put a manifest under a tag; returns its digest. */
  async pushManifest(tag: string, manifest: OciManifest): Promise<string> {
    const body = Buffer.from(JSON.stringify(manifest));
    const answer = await this.request("PUT", `/manifests/${tag}`, { body, headers: { "content-type": OCI_MEDIA_TYPES.manifest }, maxBytes: 64 * 1024 });
    if (answer.status !== 201) throw this.failure(answer, `putting the manifest ${tag}`);
    return sha256(body);
  }

  async tags(): Promise<string[]> {
    const answer = await this.request("GET", "/tags/list", { maxBytes: 4 * 1024 * 1024 });
    this.expectOk(answer, "the tag list");
    const data = JSON.parse(answer.body.toString("utf8")) as { tags?: string[] | null };
    return data.tags ?? [];
  }

  /**
   * A request with the credentials the registry asks for: a bearer token from its token service, or basic auth. They
   * go to the registry's own origin only, as Docker sends them: an upload location on another origin (a blob store)
   * gets none, and a 401 from another origin (past a redirect) is not taken as the registry asking for a token, or its
   * challenge would name a token service of its choosing that the Docker credentials are sent to.
   */
  private async request(method: string, pathOrUrl: string, options: { headers?: Record<string, string>; body?: Buffer; maxBytes: number }): Promise<HttpAnswer> {
    const url = pathOrUrl.startsWith("/") ? `${this.base}${pathOrUrl}` : pathOrUrl;
    const origin = new URL(this.base).origin;
    const own = new URL(url).origin === origin;
    const send = (): Promise<HttpAnswer> => {
      const authorization = !own ? undefined : this.token !== undefined ? `Bearer ${this.token}` : this.basic !== undefined ? `Basic ${this.basic}` : undefined;
      return httpRequest(url, { method, headers: { ...options.headers, ...(authorization ? { authorization } : {}) }, ...(options.body !== undefined ? { body: options.body } : {}), maxBytes: options.maxBytes, what: `the OCI registry ${this.registry}` });
    };
    const answer = await send();
    const challenge = answer.headers.get("www-authenticate");
    if (!own || new URL(answer.url).origin !== origin) return answer;
    if (answer.status !== 401 || challenge === null || this.token !== undefined || !/^bearer/i.test(challenge)) return answer;
    this.token = await this.fetchToken(challenge);
    return send();
  }

  private async fetchToken(challenge: string): Promise<string> {
    const fields = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!.toLowerCase(), match[2]!]));
    if (fields.realm === undefined) throw new PackageFetchError("package_fetch_failed", `the OCI registry ${this.registry} asks for a token without saying where to get one`);
    const url = new URL(fields.realm);
    // The Docker credentials go to the token service: never in clear beyond this machine.
    if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.includes(url.hostname))) {
      throw new PackageFetchError("package_fetch_failed", `the OCI registry ${this.registry} names a token service that is not HTTPS (${url.origin}): its credentials are not sent there`, { hint: "A registry's token service must be reached over HTTPS (plain HTTP only on 127.0.0.1 or localhost)." });
    }
    if (fields.service) url.searchParams.set("service", fields.service);
    if (fields.scope) url.searchParams.set("scope", fields.scope);
    const answer = await httpRequest(url.toString(), { headers: this.basic !== undefined ? { authorization: `Basic ${this.basic}` } : {}, maxBytes: 1024 * 1024, what: `the token service of ${this.registry}` });
    if (answer.status !== 200) throw this.failure(answer, "getting a token");
    const data = JSON.parse(answer.body.toString("utf8")) as { token?: string; access_token?: string };
    const token = data.token ?? data.access_token;
    if (token === undefined) throw new PackageFetchError("package_fetch_failed", `the token service of ${this.registry} gave no token`);
    registerSecret(token);
    return token;
  }

  private expectOk(answer: HttpAnswer, what: string): void {
    if (answer.status !== 200) throw this.failure(answer, what);
  }

  private failure(answer: HttpAnswer, what: string): PackageFetchError {
    const auth = answer.status === 401 || answer.status === 403;
    return new PackageFetchError("package_fetch_failed", `oci://${this.registry}/${this.repository}: ${what}: HTTP ${answer.status}`, {
      hint: auth ? `Log in as Docker would (docker login ${this.registry}): lllm reads ~/.docker/config.json.` : "Try again later; packages already installed keep working from the cache.",
    });
  }

  private tampered(what: string, actual: string): ConfigError {
    return new ConfigError("package_integrity_mismatch", `oci://${this.registry}/${this.repository}: ${what} does not match its digest (got ${actual.slice(0, 19)}…)`, { hint: "Nothing was installed: the registry (or something on the way) changed it." });
  }
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** Docker's saved credentials for a registry (base64 `user:password`), if any. */
function dockerCredentials(registry: string): string | undefined {
  const file = path.join(process.env.DOCKER_CONFIG ?? path.join(homedir(), ".docker"), "config.json");
  if (!existsSync(file)) return undefined;
  try {
    const config = JSON.parse(readFileSync(file, "utf8")) as { auths?: Record<string, { auth?: string }> };
    const auth = config.auths?.[registry]?.auth ?? config.auths?.[`https://${registry}`]?.auth;
    if (auth === undefined) return undefined;
    registerSecret(auth);
    registerSecret(Buffer.from(auth, "base64").toString("utf8").split(":").slice(1).join(":"));
    return auth;
  } catch {
    return undefined;
  }
}
