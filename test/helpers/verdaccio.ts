import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "./freePort.js";
import { ROOT } from "./paths.js";
import { tempDir } from "./tempTree.js";

/** A verdaccio npm registry of the test's own, on 127.0.0.1, with no uplink (it never reaches the real registry). */
export interface Verdaccio {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  port: number;
  /** A token of a user made at start: publishing needs one, and `@private/*` packages too (to read). */
  token: string;
  /** Publish a tarball as `name@version` (the npm publish protocol: one PUT of the packument with the tarball). */
  publish(name: string, version: string, tarball: Buffer, options?: { tag?: string; manifest?: Record<string, unknown> }): Promise<void>;
  stop(): Promise<void>;
}

/** Start verdaccio (the devDependency, 6.8.x: the last to run on Node 20) and wait until it answers. */
export async function startVerdaccio(): Promise<Verdaccio> {
  const dir = tempDir("lllm-verdaccio-");
  const port = await freePort();
  const config = path.join(dir, "config.yaml");
  writeFileSync(
    config,
    [
      `storage: ${path.join(dir, "storage")}`,
      "auth:",
      "  htpasswd:",
      `    file: ${path.join(dir, "htpasswd")}`,
      "    max_users: 10",
      "uplinks: {}",
      "packages:",
      "  '@private/*':",
      "    access: $authenticated",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "web:",
      "  enable: false",
      "log: { type: stdout, format: pretty, level: error }",
      "",
    ].join("\n"),
  );
  const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "verdaccio", "bin", "verdaccio"), "--config", config, "--listen", `127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { PATH: process.env.PATH, HOME: dir, TMPDIR: process.env.TMPDIR },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}/`;
  await waitForPing(url, child, () => output);
  const user = await fetch(`${url}-/user/org.couchdb.user:tester`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "tester", password: "a-long-password-1" }) });
  const { token } = (await user.json()) as { token: string };
  return {
    url,
    port,
    token,
    async publish(name, version, tarball, options = {}) {
      const file = `${name.replace(/^@[^/]+\//, "")}-${version}.tgz`;
      const body = {
        _id: name,
        name,
        "dist-tags": { [options.tag ?? "latest"]: version },
        versions: {
          [version]: {
            name,
            version,
            _id: `${name}@${version}`,
            ...options.manifest,
            dist: { tarball: `${url}${name}/-/${file}`, integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`, shasum: createHash("sha1").update(tarball).digest("hex") },
          },
        },
        _attachments: { [file]: { content_type: "application/octet-stream", data: tarball.toString("base64"), length: tarball.length } },
      };
      const answer = await fetch(`${url}${name.replace("/", "%2f")}`, { method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
      if (!answer.ok) throw new Error(`verdaccio refused ${name}@${version}: HTTP ${answer.status} ${await answer.text()}`);
    },
    stop: () => stopProcess(child),
  };
}

async function waitForPing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}): ${output()}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopProcess(child);
  throw new Error(`verdaccio did not answer within a minute: ${output()}`);
}

/** SIGTERM to the server's process group, and wait for it to exit. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      resolve();
    }
  });
}
