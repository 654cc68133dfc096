import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectIsolation } from "../../src/sandbox/index.js";
import { tempDir } from "../helpers/tempTree.js";
import { ROOT } from "../helpers/paths.js";
import { isRunning, processTree } from "../helpers/processTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

// A host process that starts a kernel, which starts `sleep 60`, and then exits or is killed: neither may survive.
const root = ROOT;
const folder = tempDir("lllm-host-exit-");
const script = path.join(folder, "host.ts");
writeFileSync(
  script,
  `import { PythonKernel } from ${JSON.stringify(path.join(root, "src/sandbox/index.ts"))};
const kernel = await PythonKernel.start({ isolation: { backend: process.argv[2] as "none" | "bwrap" } });
const child = await kernel.run('import subprocess\\nprint(subprocess.Popen(["sleep", "60"]).pid)');
console.log(JSON.stringify({ kernel: kernel.pid, child: Number(child) }));
// "exit": exit once the test has listed the processes (it writes a line); "stay": run until killed.
if (process.argv[3] === "exit") process.stdin.once("data", () => process.exit(0));
setInterval(() => {}, 1000);
`,
);
const support = await detectIsolation();

const running = isRunning;

/**
 * Start the host; resolve with the host pids of the kernel and everything below it (host pids: under bwrap the
 * kernel only knows its namespace's) once the kernel's child runs. `release` lets an "exit" host exit.
 */
function startHost(backend: string, mode: "exit" | "stay"): Promise<{ host: number; sandbox: number[]; exited: Promise<unknown>; release(): void }> {
  // A temp dir of the test's own: a host killed with SIGKILL leaves its kernel folder behind (the next lllm to start a
  // kernel there removes it), and the last one killed here must not be left in the suite's temp dir.
  const env = { ...process.env, TMPDIR: folder };
  const host = spawn(process.execPath, [path.join(root, "node_modules/jiti/lib/jiti-cli.mjs"), script, backend, mode], { env, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => host.once("exit", resolve));
  return new Promise((resolve, reject) => {
    let text = "";
    host.stdout.setEncoding("utf8");
    host.stdout.on("data", (chunk: string) => {
      text += chunk;
      if (!text.includes("\n")) return;
      const { kernel } = JSON.parse(text) as { kernel: number };
      resolve({ host: host.pid!, sandbox: processTree(kernel), exited, release: () => host.stdin.end("exit\n") });
    });
    host.once("exit", (code) => reject(new Error(`the host exited (${code}) before reporting: ${text}`)));
  });
}

// Each host compiles src/ through jiti before it starts a kernel: slow on a busy machine, hence the long timeout.
describe("no kernel outlives its host", { timeout: 120_000 }, () => {
  const backends = support.backend === "bwrap" ? ["none", "bwrap"] : ["none"];
  it.each(backends)("when the host exits without closing it (%s)", async (backend) => {
    const pids = await startHost(backend, "exit");
    expect(pids.sandbox.length).toBeGreaterThanOrEqual(2); // the kernel (or bwrap) and at least `sleep`
    pids.release();
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
