import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeAllKernels, PythonKernel } from "../../src/sandbox/index.js";
import { detectGvisor } from "../../src/sandbox/detectGvisor.js";

const gvisor = await detectGvisor();
const SECRET = "sk-gvisor-secret-77e1";

describe("detectGvisor", () => {
  it("reports whether runsc works, and why not", () => {
    if (gvisor.available) expect(gvisor.runsc).toMatch(/runsc$/);
    else expect(gvisor.reason).toBeTruthy();
  });
});

describe.skipIf(!gvisor.available)("PythonKernel under gVisor", () => {
  let kernel: PythonKernel;
  let server: Server;
  let port = 0;
  const outside = mkdtempSync(path.join(tmpdir(), "lllm-gvisor-outside-"));

  beforeAll(async () => {
    process.env.SECRET_TEST_KEY = SECRET;
    server = createServer((_request, response) => response.end("reached the host"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    kernel = await PythonKernel.start({ isolation: { backend: "gvisor" }, timeout: 20 });
  });

  afterAll(async () => {
    delete process.env.SECRET_TEST_KEY;
    await closeAllKernels();
    await new Promise((resolve) => server.close(resolve));
    rmSync(outside, { recursive: true, force: true });
  });

  it("runs cells with the bridge over stdio, as an unprivileged user in /workspace with a clean environment", async () => {
    expect(kernel.backend).toBe("gvisor");
    expect(await kernel.run("x = 6 * 7")).toBe("");
    expect(await kernel.run("import os\nprint(x, os.getcwd(), os.getuid() != 0, sorted(os.environ))")).toBe("42 /workspace True ['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']\n");
    const bridged = await PythonKernel.start({ isolation: { backend: "gvisor" }, hostFunctions: { double: (args) => (args as { n: number }).n * 2 } });
    expect(await bridged.run('import lllm_bridge\nprint(lllm_bridge.call("double", {"n": 21}))')).toBe("42\n");
    await bridged.close();
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
    const workspace = mkdtempSync(path.join(tmpdir(), "lllm-gvisor-workspace-"));
    try {
      const files = await PythonKernel.start({ isolation: { backend: "gvisor", workspace } });
      await files.run('open("made.txt", "w").write("inside")');
      expect(readFileSync(path.join(workspace, "made.txt"), "utf8")).toBe("inside");
      await files.close();
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!gvisor.available)("a gVisor kernel when its host is killed", () => {
  it("leaves no runsc process behind", async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const script = path.join(mkdtempSync(path.join(tmpdir(), "lllm-gvisor-host-")), "host.ts");
    writeFileSync(
      script,
      `import { PythonKernel } from ${JSON.stringify(path.join(root, "src/sandbox/index.ts"))};
const kernel = await PythonKernel.start({ isolation: { backend: "gvisor" } });
await kernel.run('import subprocess\\nsubprocess.Popen(["sleep", "60"])');
console.log(kernel.pid);
setInterval(() => {}, 1000);
`,
    );
    const host = spawn(process.execPath, [path.join(root, "node_modules/jiti/lib/jiti-cli.mjs"), script], { stdio: ["ignore", "pipe", "inherit"] });
    const pid = await new Promise<number>((resolve) => host.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    const state = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").find((arg) => arg.startsWith("--root="))!;
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
    const deadline = Date.now() + 5000;
    while (runsc().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runsc()).toEqual([]);
  });
});
