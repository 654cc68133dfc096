import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeAllKernels, PythonKernel } from "../../src/sandbox/index.js";
import { detectGvisor } from "../../src/sandbox/detectGvisor.js";
import { startCanaryServer, type CanaryServer } from "../helpers/canaryServer.js";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

const gvisor = await detectGvisor();

// The gVisor tests skip where runsc cannot run; CI installs it, so there the skip would hide them.
describe.runIf(process.env["CI"] === "true")("gVisor under CI", () => {
  it("is available (.ci/run installs runsc), so the gVisor tests below run", () => {
    expect(gvisor.available).toBe(true);
  });
});

/** The cgroups (v1 hierarchies or v2) named after a container id. */
function cgroupsNamed(container: string): string[] {
  const roots = existsSync("/sys/fs/cgroup") ? readdirSync("/sys/fs/cgroup").map((name) => path.join("/sys/fs/cgroup", name)) : [];
  return ["/sys/fs/cgroup", ...roots].map((root) => path.join(root, container)).filter((folder) => existsSync(folder));
}
const SECRET = "sk-gvisor-secret-77e1";

describe("detectGvisor", () => {
  it("reports whether runsc works, and why not", () => {
    if (gvisor.available) expect(gvisor.runsc).toMatch(/runsc$/);
    else expect(gvisor.reason).toBeTruthy();
  });
});

// A gVisor kernel starts in seconds, and a fork bomb in it takes many more, on a busy machine: generous limits.
describe.skipIf(!gvisor.available)("PythonKernel under gVisor", { timeout: 180_000 }, () => {
  let kernel: PythonKernel;
  let canary: CanaryServer;
  let port = 0;
  const outside = tempDir("lllm-gvisor-outside-");

  beforeAll(async () => {
    vi.stubEnv("SECRET_TEST_KEY", SECRET);
    canary = await startCanaryServer();
    port = canary.port;
    kernel = await PythonKernel.start({ isolation: { backend: "gvisor" }, timeout: 120 });
  }, 120_000);

  afterAll(async () => {
    vi.unstubAllEnvs();
    await closeAllKernels();
    await canary.close();
  });

  it("runs cells with the bridge over stdio, as an unprivileged user in /workspace with a clean environment", async () => {
    expect(kernel.backend).toBe("gvisor");
    expect(await kernel.run("x = 6 * 7")).toBe("");
    expect(await kernel.run("import os\nprint(x, os.getcwd(), os.getuid() != 0, sorted(os.environ))")).toBe("42 /workspace True ['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']\n");
    const bridged = await PythonKernel.start({ isolation: { backend: "gvisor" }, hostFunctions: { double: (args) => (args as { n: number }).n * 2 } });
    expect(await bridged.run('import lllm_bridge\nprint(lllm_bridge.call("double", {"n": 21}))')).toBe("42\n");
    const container = readFileSync(`/proc/${bridged.pid}/cmdline`, "utf8").split("\0").filter(Boolean).at(-1)!;
    expect(container).toMatch(/^lllm-\d+-\d+$/);
    await bridged.close();
    // A closed kernel's runsc is killed, and could not remove a cgroup of its container: it must have made none.
    expect(cgroupsNamed(container)).toEqual([]);
  });

  it("has no network, no host secrets, and no host files", async () => {
    const output = await kernel.run(`import os, socket
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=3).close()
    print("connected")
except OSError as error:
    print("failed:", type(error).__name__)
print(repr(dict(os.environ)))
print(os.path.exists(${JSON.stringify(process.cwd())}), os.path.exists("/root/.ssh"), sorted(os.listdir("/etc")))
for target in [${JSON.stringify(path.join(outside, "x"))}, "/usr/escape.txt", "/etc/escape.txt"]:
    try:
        open(target, "w").write("escaped")
        print("written")
    except OSError as error:
        print(type(error).__name__)`);
    expect(output).toContain("failed: ");
    expect(output).not.toContain("connected");
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain("written");
    expect(output).toContain("False False");
    expect(existsSync(path.join(outside, "x"))).toBe(false);
  });

  it("keeps the process limit, and the kernel survives a fork bomb", async () => {
    const result = await kernel.execute("import os\nwhile True:\n    os.fork()");
    expect(result.output).toContain("BlockingIOError");
    expect(await kernel.run("print('alive')")).toBe("alive\n");
  });

  it("keeps the memory limit", async () => {
    const result = await kernel.execute("x = bytearray(4 * 1024**3)");
    expect(result.output).toContain("MemoryError");
  });

  it("shares a host workspace, and gives it back", async () => {
    const workspace = tempDir("lllm-gvisor-workspace-");
    const files = await PythonKernel.start({ isolation: { backend: "gvisor", workspace } });
    await files.run('open("made.txt", "w").write("inside")');
    expect(readFileSync(path.join(workspace, "made.txt"), "utf8")).toBe("inside");
    await files.close();
  });
});

describe.skipIf(!gvisor.available)("a gVisor kernel when its host is killed", () => {
  // The host compiles src/ through jiti before it starts a kernel: slow on a busy machine, hence the long timeout.
  it("leaves no runsc process and no cgroup behind", { timeout: 120_000 }, async () => {
    const root = ROOT;
    const script = path.join(tempDir("lllm-gvisor-host-"), "host.ts");
    writeFileSync(
      script,
      `import { PythonKernel } from ${JSON.stringify(path.join(root, "src/sandbox/index.ts"))};
const kernel = await PythonKernel.start({ isolation: { backend: "gvisor" } });
await kernel.run('import subprocess\\nsubprocess.Popen(["sleep", "60"])');
console.log(kernel.pid);
setInterval(() => {}, 1000);
`,
    );
    // A host killed with SIGKILL cannot remove its kernel folder (a later host sweeps it): give it a TMPDIR of its
    // own, which this file removes, so that the suite's check for folders lllm failed to remove does not count it.
    const env = { ...process.env, TMPDIR: tempDir("lllm-gvisor-host-tmp-") };
    const host = spawn(process.execPath, [path.join(root, "node_modules/jiti/lib/jiti-cli.mjs"), script], { env, stdio: ["ignore", "pipe", "inherit"] });
    const pid = await new Promise<number>((resolve) => host.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    const state = commandLine.find((arg) => arg.startsWith("--root="))!;
    const runsc = (): string[] =>
      readdirSync("/proc").filter((name) => {
        try {
          return /^\d+$/.test(name) && readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").includes(state);
        } catch {
          return false; // exited meanwhile
        }
      });
    expect(runsc().length).toBeGreaterThan(1); // runsc run, its gofer and its sandbox
    host.kill("SIGKILL");
    await waitUntil(() => runsc().length === 0);
    expect(runsc()).toEqual([]);
    expect(cgroupsNamed(commandLine.at(-1)!)).toEqual([]);
  });
});
