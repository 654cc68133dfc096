import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/freePort.js";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { startVerdaccio, type Verdaccio } from "../helpers/verdaccio.js";
import { cacheOf, lllm, project, writeFile, lllmInProcess } from "./packageFixtures.js";

// npm: sources against a real npm registry (verdaccio) started here, configured through .npmrc as npm reads it.
// The first case and an install spawn the built CLI; the rest run it in this process (`lllmInProcess`).


let registry: Verdaccio;
beforeAll(async () => {
  registry = await startVerdaccio();
  const greet = (text: string) => packageTarball({ "package.json": JSON.stringify({ name: "@acme/greet", version: "0", lllm: { name: "greet" } }), "prompts/system.md": text });
  await registry.publish("@acme/greet", "1.0.0", greet("Version one."));
  await registry.publish("@acme/greet", "1.1.0", greet("Version one point one."));
  await registry.publish("@acme/greet", "2.0.0-beta.1", greet("Beta."), { tag: "next" });
}, 120_000);
afterAll(() => registry?.stop());

function npmProject(extra = ""): string {
  const dir = project();
  writeFile(path.join(dir, ".npmrc"), `registry=${registry.url}\n${extra}`);
  return dir;
}

describe("an npm package", () => {
  it("is added at the highest version (recorded as ^VERSION), locked with the registry's integrity, and runs offline", async () => {
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    const added = await lllm(["add", "npm:@acme/greet"], { cwd: dir, home });
    expect(added.stderr).toContain("fetched npm:@acme/greet (greet 1.1.0, no code)");
    expect(added.code, added.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "lllm.toml"), "utf8")).toContain('"npm:@acme/greet@^1.1.0"');
    const entry = JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages["npm:@acme/greet@^1.1.0"];
    expect(entry).toMatchObject({ name: "greet", version: "1.1.0", resolved: `${registry.url}@acme/greet/-/greet-1.1.0.tgz`, tarball: expect.stringMatching(/^sha512-/), code: [] });
    const run = await lllm(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home });
    expect(run.stdout).toContain("Version one point one.");
  }, 120_000);

  it("takes a range, a dist-tag; an unknown version or package is a clear error listing what exists", async () => {
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    expect((await lllmInProcess(["add", "npm:@acme/greet@~1.0.0"], { cwd: dir, home })).stderr).toContain("(greet 1.0.0, no code)");
    expect((await lllmInProcess(["add", "npm:@acme/greet@next"], { cwd: dir, home })).stderr).toContain("(greet 2.0.0-beta.1, no code)");
    const unknown = await lllmInProcess(["add", "npm:@acme/greet@^3"], { cwd: dir, home });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("npm package `@acme/greet` has no version matching `^3`");
    expect(unknown.stderr).toContain("Its versions: 2.0.0-beta.1, 1.1.0, 1.0.0; its tags: latest (1.1.0), next (2.0.0-beta.1)");
    await registry.publish("@acme/plain", "1.0.0", packageTarball({ "package.json": JSON.stringify({ name: "@acme/plain", version: "1.0.0" }), "index.js": "module.exports = 1;\n" }));
    const plain = await lllmInProcess(["add", "npm:@acme/plain"], { cwd: dir, home });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toContain("is an npm package, but not an lllm package");
    expect(cacheOf(home).other).toEqual([]);
    const missing = await lllmInProcess(["add", "npm:@acme/nothing"], { cwd: dir, home });
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`there is no npm package \`@acme/nothing\` in ${registry.url}`);
  }, 120_000);

  it("a registry that is down is a clear error (exit 1); what is cached still installs and runs", async () => {
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    expect((await lllmInProcess(["add", "npm:@acme/greet@^1"], { cwd: dir, home })).code).toBe(0);
    const port = await freePort();
    const downProject = npmProject();
    writeFile(path.join(downProject, ".npmrc"), `registry=http://127.0.0.1:${port}/\n`);
    const refused = await lllmInProcess(["add", "npm:@acme/greet"], { cwd: downProject, home });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`cannot reach the npm registry 127.0.0.1:${port} at http://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(refused.stderr).toContain("Packages already installed keep working");
    writeFile(path.join(dir, ".npmrc"), `registry=http://127.0.0.1:${port}/\n`);
    expect((await lllm(["install", "--frozen"], { cwd: dir, home })).stderr).toContain("all from the cache");
    expect((await lllmInProcess(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi"], { cwd: dir, home })).code).toBe(0);
    expect(cacheOf(home).other).toEqual([]);
  }, 120_000);
});

/** A front for the registry: passes requests on, except tarballs, which it redirects or corrupts when told to. */
async function registryFront(options: { tarballs: "redirect" | "corrupt" }): Promise<{ url: string; seen: Array<{ path: string; authorization?: string }>; close(): Promise<void> }> {
  const seen: Array<{ path: string; authorization?: string }> = [];
  const other = createServer(async (request, response) => {
    seen.push({ path: `other:${request.url}`, ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) });
    const upstream = await fetch(`${registry.url.slice(0, -1)}${request.url}`, { headers: { authorization: `Bearer ${registry.token}` } });
    response.writeHead(upstream.status).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const front = createServer(async (request, response) => {
    seen.push({ path: request.url!, ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) });
    if (request.url!.includes("/-/") && options.tarballs === "redirect") {
      response.writeHead(302, { location: `${otherOrigin}${request.url}` }).end();
      return;
    }
    const upstream = await fetch(`${registry.url.slice(0, -1)}${request.url}`, { headers: { ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}), accept: request.headers.accept ?? "*/*" } });
    let body = Buffer.from(await upstream.arrayBuffer());
    const tarball = request.url!.includes("/-/");
    // The packument names tarballs at the registry's own address: make them the front's, as a real front would.
    if (!tarball) body = Buffer.from(body.toString("utf8").replaceAll(registry.url, frontUrl));
    if (tarball && options.tarballs === "corrupt") body[body.length - 30]! ^= 0xff;
    response.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/octet-stream" }).end(body);
  });
  const frontPort = await freePort();
  const frontUrl = `http://127.0.0.1:${frontPort}/`;
  await new Promise<void>((resolve) => front.listen(frontPort, "127.0.0.1", resolve));
  return {
    url: frontUrl,
    seen,
    close: async () => {
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => other.close(resolve));
    },
  };
}

describe("npm credentials", () => {
  it("come from .npmrc (${VAR} expanded) for the registry's origin only, and never show in output or the lock", async () => {
    await registry.publish("@private/secret", "1.0.0", packageTarball({ "package.json": JSON.stringify({ name: "@private/secret", version: "1.0.0", lllm: { name: "secret" } }), "prompts/system.md": "Secret." }));
    const host = registry.url.replace(/^http:/, "");
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    const refused = await lllmInProcess(["add", "npm:@private/secret"], { cwd: dir, home });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain("refused (HTTP 401)");
    expect(refused.stderr).toContain("npm login --registry");
    writeFile(path.join(dir, ".npmrc"), `@private:registry=${registry.url}\nregistry=http://127.0.0.1:${await freePort()}/\n${host}:_authToken=\${TEST_NPM_TOKEN}\n`);
    const added = await lllmInProcess(["add", "npm:@private/secret", "--json"], { cwd: dir, home, env: { TEST_NPM_TOKEN: registry.token } });
    expect(added.stderr).toContain("fetched npm:@private/secret (secret 1.0.0, no code)");
    expect(added.code, added.stderr).toBe(0);
    for (const text of [added.stdout, added.stderr, readFileSync(path.join(dir, "lllm.lock"), "utf8"), readFileSync(path.join(dir, "lllm.toml"), "utf8")]) expect(text).not.toContain(registry.token);
  }, 120_000);

  it("stay behind when the registry redirects a tarball to another origin (another port of the same host)", async () => {
    const front = await registryFront({ tarballs: "redirect" });
    try {
      const dir = npmProject();
      writeFile(path.join(dir, ".npmrc"), `registry=${front.url}\n${front.url.replace(/^http:/, "")}:_authToken=${registry.token}\n`);
      const home = tempDir("lllm-home-");
      const added = await lllmInProcess(["add", "npm:@acme/greet@1.0.0"], { cwd: dir, home });
      expect(added.code, added.stderr).toBe(0);
      const atFront = front.seen.filter((request) => !request.path.startsWith("other:"));
      const atOther = front.seen.filter((request) => request.path.startsWith("other:"));
      // The token went where .npmrc names it, and the redirected request reached the other origin without it.
      expect(atFront.every((request) => request.authorization === `Bearer ${registry.token}`)).toBe(true);
      expect(atOther).toEqual([{ path: "other:/@acme/greet/-/greet-1.0.0.tgz" }]);
    } finally {
      await front.close();
    }
  }, 120_000);

  it("a tarball changed on the way fails its integrity: nothing installed", async () => {
    const front = await registryFront({ tarballs: "corrupt" });
    try {
      const dir = npmProject();
      writeFile(path.join(dir, ".npmrc"), `registry=${front.url}\n`);
      const home = tempDir("lllm-home-");
      const added = await lllmInProcess(["add", "npm:@acme/greet@1.0.0"], { cwd: dir, home });
      expect(added.code, added.stderr).toBe(2);
      expect(added.stderr).toContain("the tarball of @acme/greet@1.0.0 does not match its integrity");
      expect(cacheOf(home)).toEqual({ packages: [], other: [] });
    } finally {
      await front.close();
    }
  }, 120_000);
});

describe("dependencies of a shared package", () => {
  it("are fetched, cached and locked with it; a tactic's packages: and -p name shared packages too, through the lock", async () => {
    await registry.publish(
      "@acme/desk",
      "1.0.0",
      packageTarball({ "package.json": JSON.stringify({ name: "@acme/desk", version: "1.0.0" }), "lllm.toml": '[package]\nname = "desk"\nversion = "1.0.0"\n\n[dependencies]\npackages = ["npm:@acme/greet@~1.0.0 as hi"]\n', "prompts/desk.md": "Desk." }),
    );
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    const added = await lllmInProcess(["add", "npm:@acme/desk"], { cwd: dir, home });
    expect(added.code, added.stderr).toBe(0);
    const lock = JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages;
    expect(lock["npm:@acme/desk@^1.0.0"].dependencies).toEqual(["npm:@acme/greet@~1.0.0"]);
    expect(lock["npm:@acme/greet@~1.0.0"]).toMatchObject({ name: "greet", version: "1.0.0" });
    // The dependency is known by its alias inside the package's tree.
    writeFile(path.join(dir, "tactic.yaml"), readFileSync(path.join(dir, "tactic.yaml"), "utf8").replace("greet.prompts:system", "hi.prompts:system"));
    expect((await lllmInProcess(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home })).stdout).toContain("Version one.");

    // The same source in a tactic's packages: (and with -p), with no manifest entry: resolved through the lock.
    const other = tempDir("lllm-tactics-");
    writeFile(path.join(other, "t.yaml"), ["name: t", 'prompt: "{input}"', 'packages: ["npm:@acme/greet@~1.0.0"]', "agent_configs:", "  - name: a", "    system_prompt_path: greet.prompts:system", ""].join("\n"));
    writeFile(path.join(other, "p.yaml"), ["name: p", 'prompt: "{input}"', "agent_configs:", "  - name: a", "    system_prompt_path: desk.prompts:desk", ""].join("\n"));
    expect((await lllmInProcess(["run", path.join(other, "t.yaml"), "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home })).stdout).toContain("Version one.");
    const flagged = await lllmInProcess(["run", path.join(other, "p.yaml"), "-p", "npm:@acme/desk@^1.0.0", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home });
    expect(flagged.stdout, flagged.stderr).toContain("Desk.");
    const unlocked = await lllmInProcess(["run", path.join(other, "p.yaml"), "-p", "npm:@acme/other@^1", "--model", "scripted:script.yaml", "--input", "hi"], { cwd: dir, home });
    expect(unlocked.code, unlocked.stderr).toBe(2);
    expect(unlocked.stderr).toContain("package `npm:@acme/other@^1` is not installed");
  }, 120_000);
});

describe("a package the added one depends on", () => {
  it("with the name of another of the project's is refused at add, the project left as it was; --as fixes it", async () => {
    const kit = (version: string, text: string) => packageTarball({ "package.json": JSON.stringify({ name: "@acme/kit", version, lllm: { name: "kit" } }), "prompts/system.md": text });
    await registry.publish("@acme/kit", "0.1.0", kit("0.1.0", "Kit zero."));
    await registry.publish("@acme/kit", "1.0.0", kit("1.0.0", "Kit one."));
    await registry.publish("@acme/uses-kit", "1.0.0", packageTarball({ "package.json": JSON.stringify({ name: "@acme/uses-kit", version: "1.0.0" }), "lllm.toml": '[package]\nname = "useskit"\nversion = "1.0.0"\n\n[dependencies]\npackages = ["npm:@acme/kit@~0.1.0"]\n', "prompts/uses.md": "Uses kit." }));
    const dir = npmProject();
    const home = tempDir("lllm-home-");
    expect((await lllmInProcess(["add", "npm:@acme/uses-kit"], { cwd: dir, home })).code).toBe(0);
    const manifest = readFileSync(path.join(dir, "lllm.toml"), "utf8");
    const lock = readFileSync(path.join(dir, "lllm.lock"), "utf8");
    const clash = await lllmInProcess(["add", "npm:@acme/kit@1.0.0"], { cwd: dir, home });
    expect(clash.code, clash.stderr).toBe(2);
    expect(clash.stderr).toContain("two packages are named `kit`");
    expect(clash.stderr).toContain("lllm add npm:@acme/kit@1.0.0 --as kit2");
    expect(readFileSync(path.join(dir, "lllm.toml"), "utf8")).toBe(manifest);
    expect(readFileSync(path.join(dir, "lllm.lock"), "utf8")).toBe(lock);
    expect((await lllmInProcess(["add", "npm:@acme/kit@1.0.0", "--as", "kit2"], { cwd: dir, home })).code).toBe(0);
    writeFile(path.join(dir, "tactic.yaml"), readFileSync(path.join(dir, "tactic.yaml"), "utf8").replace("greet.prompts:system", "kit2.prompts:system"));
    expect((await lllmInProcess(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home })).stdout).toContain("Kit one.");
  }, 120_000);
});
