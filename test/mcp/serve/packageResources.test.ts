import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { packageResources } from "../../../src/mcp/serve/packageResources.js";
import { Registry } from "../../../src/registry/index.js";
import { tempDir } from "../../helpers/tempTree.js";

/** A package folder whose documents may be symlinks out of it, and the secret they point to. */
function packageWithLinks(): { dir: string; secret: string } {
  const outside = tempDir();
  const secret = path.join(outside, "id_rsa");
  writeFileSync(secret, "-----BEGIN PRIVATE KEY-----\n");
  const dir = tempDir();
  writeFileSync(path.join(dir, "lllm.yaml"), "name: linked\nversion: 0.1.0\n");
  mkdirSync(path.join(dir, "docs"));
  writeFileSync(path.join(dir, "docs", "guide.md"), "# Guide\n");
  symlinkSync(secret, path.join(dir, "docs", "key.md"));
  symlinkSync(secret, path.join(dir, "README.md"));
  return { dir, secret };
}

async function resourcesOf(dir: string): Promise<Awaited<ReturnType<typeof packageResources>>> {
  const registry = await Registry.load({ packages: [dir], discover: false });
  return packageResources(registry.list().find((pkg) => pkg.name === "linked")!, []);
}

describe("a package's documents, served as resources", () => {
  it("leave out a README.md that is a symlink, as docs/ and resources/ leave theirs out", async () => {
    const { dir } = packageWithLinks();
    const { resources } = await resourcesOf(dir);
    expect(resources.map((resource) => resource.name)).toEqual(["docs/guide.md"]);
  });

  it("are read without following a symlink put in a listed file's place", async () => {
    const { dir, secret } = packageWithLinks();
    rmSync(path.join(dir, "README.md"));
    writeFileSync(path.join(dir, "README.md"), "# Linked\n");
    const { resources } = await resourcesOf(dir);
    const readme = resources.find((resource) => resource.name === "README.md")!;
    expect(await readme.read()).toEqual([{ uri: "lllm://linked/README.md", mimeType: "text/markdown", text: "# Linked\n" }]);
    rmSync(path.join(dir, "README.md"));
    symlinkSync(secret, path.join(dir, "README.md"));
    await expect(readme.read()).rejects.toThrow(/ELOOP/);
  });
});
