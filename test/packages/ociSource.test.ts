import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOciRegistry, type OciTestRegistry } from "../helpers/ociRegistry.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { cacheOf, lllm, project, PROMPT_PACKAGE, TOOL_PACKAGE } from "./packageFixtures.js";

// oci:// sources and `lllm publish --to oci://` against a real distribution registry (Debian's docker-registry).

let registry: OciTestRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
}, 120_000);
afterAll(() => registry?.stop());

describe("an OCI package", () => {
  it("is published from a folder, added on another machine (another home) by tag, pinned by digest, and runs from the cache", async () => {
    const author = tempDir("lllm-author-");
    writeTree(author, { ...TOOL_PACKAGE, ...{ "prompts/system.md": "From the registry." }, ".env": "SECRET=1\n" });
    const published = await lllm(["publish", ".", "--to", `oci://${registry.host}/acme/hello:1.0.0`], { cwd: author, home: tempDir("lllm-home-") });
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(new RegExp(`^oci://${registry.host}/acme/hello@sha256:[0-9a-f]{64}\\n$`));
    const digest = published.stdout.trim().split("@")[1]!;

    const dir = project({ withTool: true });
    writeTree(dir, { "tactic.yaml": readFileSync(path.join(dir, "tactic.yaml"), "utf8").replace("greet.prompts:system", "hello.prompts:system") });
    const home = tempDir("lllm-home-");
    const added = await lllm(["add", `oci://${registry.host}/acme/hello:1.0.0`, "--trust"], { cwd: dir, home });
    expect(added.code, added.stderr).toBe(0);
    const entry = JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages[`oci://${registry.host}/acme/hello:1.0.0`];
    expect(entry).toMatchObject({ name: "hello", version: "1.0.0", digest, resolved: `oci://${registry.host}/acme/hello@${digest}`, code: ["tools/hello.ts: TypeScript, tool code, run when the package loads"] });
    const run = await lllm(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--json"], { cwd: dir, home });
    expect(JSON.parse(run.stdout).tool_calls).toEqual([expect.objectContaining({ name: "hello", result: "Hello, Ada!" })]);

    // The tag moves to other files: the lock's digest still installs the trusted ones.
    writeTree(author, { "prompts/system.md": "Moved." });
    expect((await lllm(["publish", ".", "--to", `oci://${registry.host}/acme/hello:1.0.0`], { cwd: author, home: tempDir("lllm-home-") })).code).toBe(0);
    const other = tempDir("lllm-home-");
    expect((await lllm(["install", "--frozen", "--trust"], { cwd: dir, home: other })).code).toBe(0);
    expect((await lllm(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home: other })).stdout).toContain("From the registry.");
    // The packed layer left the dot file out.
    expect(cacheOf(other).packages).toHaveLength(1);
    expect(existsSync(path.join(other, "packages", ".store", cacheOf(other).packages[0]!, ".env"))).toBe(false);

    // A layer changed in the registry's storage: its digest no longer matches; nothing is installed.
    const manifest = JSON.parse(await (await fetch(`http://${registry.host}/v2/acme/hello/manifests/${digest}`, { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } })).text());
    const layer = registry.blob(manifest.layers[0].digest);
    const bytes = readFileSync(layer);
    bytes[bytes.length - 20]! ^= 0xff;
    writeFileSync(layer, bytes);
    const third = tempDir("lllm-home-");
    const tampered = await lllm(["install", "--trust"], { cwd: dir, home: third });
    expect(tampered.code, tampered.stderr).toBe(2);
    expect(tampered.stderr).toContain(`the layer ${manifest.layers[0].digest} does not match its digest`);
    expect(cacheOf(third)).toEqual({ packages: [], other: [] });
  }, 180_000);

  it("an unknown tag lists the tags; a repository that is not an lllm package is refused", async () => {
    const author = tempDir("lllm-author-");
    writeTree(author, PROMPT_PACKAGE);
    expect((await lllm(["publish", author, "--to", `oci://${registry.host}/acme/greet:2.0.0`], { cwd: author, home: tempDir("lllm-home-") })).code).toBe(0);
    const dir = project();
    const home = tempDir("lllm-home-");
    const unknown = await lllm(["add", `oci://${registry.host}/acme/greet:9.9.9`], { cwd: dir, home });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain(`oci://${registry.host}/acme/greet has no \`9.9.9\``);
    expect(unknown.stderr).toContain("Its tags: 2.0.0.");
    // A plain image-like manifest pushed by hand.
    const config = Buffer.from("{}");
    const base = `http://${registry.host}/v2/acme/image`;
    const upload = await fetch(`${base}/blobs/uploads/`, { method: "POST" });
    const location = new URL(upload.headers.get("location")!, base);
    const { createHash } = await import("node:crypto");
    const configDigest = `sha256:${createHash("sha256").update(config).digest("hex")}`;
    location.searchParams.set("digest", configDigest);
    expect((await fetch(location, { method: "PUT", body: config })).status).toBe(201);
    const manifest = { schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: config.length }, layers: [] };
    expect((await fetch(`${base}/manifests/1`, { method: "PUT", headers: { "content-type": manifest.mediaType }, body: JSON.stringify(manifest) })).status).toBe(201);
    const image = await lllm(["add", `oci://${registry.host}/acme/image:1`], { cwd: dir, home });
    expect(image.code, image.stderr).toBe(2);
    expect(image.stderr).toContain("is not an lllm package");
  }, 120_000);
});
