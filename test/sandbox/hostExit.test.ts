import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { detectIsolation } from "../../src/sandbox/index.js";

// A host process that starts a kernel, which starts `sleep 60`, and then exits or is killed: neither may survive.
const root = fileURLToPath(new URL("../..", import.meta.url));
const folder = mkdtempSync(path.join(tmpdir(), "lllm-host-exit-"));
const script = path.join(folder, "host.ts");
writeFileSync(
  script,
  `import { PythonKernel } from ${JSON.stringify(path.join(root, "src/sandbox/index.ts"))};
const kernel = await PythonKernel.start({ isolation: { backend: process.argv[2] as "none" | "bwrap" } });
const child = await kernel.run('import subprocess\\nprint(subprocess.Popen(["sleep", "60"]).pid)');
console.log(JSON.stringify({ kernel: kernel.pid, child: Number(child) }));
await new Promise((resolve) => setTimeout(resolve, 300)); // time for the test to list the processes
if (process.argv[3] === "exit") process.exit(0);
setInterval(() => {}, 1000);
`,
);
const support = await detectIsolation();

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** `pid` and every process below it, as host pids (under bwrap the kernel only knows its namespace's pids). */
function tree(pid: number): number[] {
  const found = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) found.push(...tree(Number(child)));
    }
  } catch {
    // exited meanwhile
  }
  return found;
}

async function waitUntil(condition: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** Start the host; resolve with the host pids of the kernel and everything below it once the kernel's child runs. */
function startHost(backend: string, mode: "exit" | "stay"): Promise<{ host: number; sandbox: number[]; exited: Promise<unknown> }> {
  const host = spawn(process.execPath, [path.join(root, "node_modules/jiti/lib/jiti-cli.mjs"), script, backend, mode], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => host.once("exit", resolve));
  return new Promise((resolve, reject) => {
    let text = "";
    host.stdout.setEncoding("utf8");
    host.stdout.on("data", (chunk: string) => {
      text += chunk;
      if (!text.includes("\n")) return;
      const { kernel } = JSON.parse(text) as { kernel: number };
      resolve({ host: host.pid!, sandbox: tree(kernel), exited });
    });
    host.once("exit", (code) => reject(new Error(`the host exited (${code}) before reporting: ${text}`)));
  });
}

describe("no kernel outlives its host", () => {
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const backends = support.backend === "bwrap" ? ["none", "bwrap"] : ["none"];
  it.each(backends)("when the host exits without closing it (%s)", async (backend) => {
    const pids = await startHost(backend, "exit");
    expect(pids.sandbox.length).toBeGreaterThanOrEqual(2); // the kernel (or bwrap) and at least `sleep`
    await pids.exited;
    expect(await waitUntil(() => !pids.sandbox.some(running))).toBe(true);
  });

  it.each(backends)("when the host is killed with SIGKILL (%s)", async (backend) => {
    const pids = await startHost(backend, "stay");
    expect(pids.sandbox.every(running)).toBe(true);
    process.kill(pids.host, "SIGKILL");
    await pids.exited;
    expect(await waitUntil(() => !pids.sandbox.some(running))).toBe(true);
  });
});
