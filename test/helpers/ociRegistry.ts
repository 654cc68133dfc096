import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "./freePort.js";
import { tempDir } from "./tempTree.js";
import { stopProcess } from "./verdaccio.js";

/** Debian's `docker-registry` (the CNCF distribution server), installed by .ci/run. */
export const DOCKER_REGISTRY = "/usr/bin/docker-registry";

/** A distribution registry of the test's own on 127.0.0.1, storing into a temp folder. */
export interface OciTestRegistry {
  /** `127.0.0.1:PORT`, as an oci:// reference names it. */
  host: string;
  /** Where it keeps blobs: `blob(digest)` is the file of one (to corrupt it). */
  blob(digest: string): string;
  stop(): Promise<void>;
}

export async function startOciRegistry(): Promise<OciTestRegistry> {
  if (!existsSync(DOCKER_REGISTRY)) throw new Error(`${DOCKER_REGISTRY} is missing: apt-get install docker-registry (.ci/run installs it)`);
  // A free port may be taken by another test's server before the registry binds it: then it exits, and another is tried.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnFreePort();
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startOnFreePort(): Promise<OciTestRegistry> {
  const dir = tempDir("lllm-oci-");
  const port = await freePort();
  const config = path.join(dir, "config.yml");
  writeFileSync(config, ["version: 0.1", "log:", "  level: error", "  accesslog:", "    disabled: true", "storage:", "  filesystem:", `    rootdirectory: ${path.join(dir, "data")}`, "http:", `  addr: 127.0.0.1:${port}`, ""].join("\n"));
  const child = spawn(DOCKER_REGISTRY, ["serve", config], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { PATH: process.env.PATH, HOME: dir } });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const end = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new (/address already in use/.test(output) ? PortTaken : Error)(`docker-registry exited (${child.exitCode}): ${output}`);
    try {
      // Bounded: a port some other server took (and holds a request on) must not stall the wait.
      if ((await fetch(`http://127.0.0.1:${port}/v2/`, { signal: AbortSignal.timeout(5000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      await stopProcess(child);
      throw new Error(`docker-registry did not answer within a minute: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const blob = (digest: string): string => {
    const hex = digest.replace(/^sha256:/, "");
    return path.join(dir, "data", "docker", "registry", "v2", "blobs", "sha256", hex.slice(0, 2), hex, "data");
  };
  return { host: `127.0.0.1:${port}`, blob, stop: () => stopProcess(child) };
}
