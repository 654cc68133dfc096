import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeAllKernels, detectIsolation, PythonKernel } from "../../src/sandbox/index.js";
import { startCanaryServer, type CanaryServer } from "../helpers/canaryServer.js";
import { pidNamespace, processesInNamespace, processTree, waitUntil } from "../helpers/processTree.js";
import { removeTempDir, tempDir } from "../helpers/tempTree.js";

const support = await detectIsolation();
const SECRET = "sk-test-secret-4f9a1c";

describe("detectIsolation", () => {
  it("reports a backend, and a reason when it is not bubblewrap", () => {
    expect(["bwrap", "none"]).toContain(support.backend);
    if (support.backend === "none") expect(support.reason).toBeTruthy();
    else expect(support.reason).toBeUndefined();
  });

  // The isolation tests below skip where bubblewrap cannot run; CI installs it, so there the skip would hide them.
  it.runIf(process.env["CI"] === "true")("has bubblewrap under CI (.ci/run installs it), so the isolation tests below run", () => {
    expect(support.reason ?? "").toBe("");
    expect(support.backend).toBe("bwrap");
  });

  it("probes once and caches the answer", async () => {
    expect(detectIsolation()).toBe(detectIsolation());
    expect(await detectIsolation()).toEqual(support);
  });
});

// A fork bomb, a memory bomb, new kernels: many seconds each on a busy machine, hence the generous limits.
describe.skipIf(support.backend !== "bwrap")("PythonKernel under bubblewrap", { timeout: 120_000 }, () => {
  let kernel: PythonKernel;
  let canary: CanaryServer;
  let port = 0;
  const outside = tempDir("lllm-outside-");

  beforeAll(async () => {
    vi.stubEnv("SECRET_TEST_KEY", SECRET);
    canary = await startCanaryServer();
    port = canary.port;
    kernel = await PythonKernel.start({ isolation: { backend: "bwrap" }, timeout: 120 });
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    await closeAllKernels();
    await canary.close();
  });

  it("runs as an unprivileged user in /workspace with a clean environment", async () => {
    expect(kernel.backend).toBe("bwrap");
    const output = await kernel.run("import os\nprint(os.getcwd(), os.getuid() != 0, sorted(os.environ))");
    expect(output).toBe("/workspace True ['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']\n");
  });

  it("cannot read an API key the host holds, from its environment or any process's", async () => {
    const output = await kernel.run(`import os
seen = [repr(dict(os.environ))]
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            seen.append(open(f"/proc/{pid}/environ", "rb").read().decode("utf-8", "replace"))
        except OSError as error:
            seen.append(type(error).__name__)
print("\\n".join(seen))`);
    expect(output).toContain("PATH");
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain("SECRET_TEST_KEY");
  });

  it("cannot connect to a server on the host's 127.0.0.1", async () => {
    const output = await kernel.run(`import socket
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=3).close()
    print("connected")
except OSError as error:
    print("failed:", type(error).__name__)`);
    expect(output).toBe("failed: ConnectionRefusedError\n");
    expect(canary.requests()).toBe(0);
    // The same code without isolation does reach the server: the check above can fail.
    const plain = await PythonKernel.start({ isolation: { backend: "none" } });
    expect(await plain.run(`import socket\nsocket.create_connection(("127.0.0.1", ${port}), timeout=3).close()\nprint("connected")`)).toBe("connected\n");
    await plain.close();
  });

  it("cannot write outside its workspace; writes inside land in the workspace", async () => {
    const targets = [path.join(outside, "x"), path.join(process.cwd(), "sandbox-escape.txt"), path.join(process.env.HOME ?? "/root", "sandbox-escape.txt"), "/usr/sandbox-escape.txt", "/etc/sandbox-escape.txt"];
    const output = await kernel.run(`results = []
for target in ${JSON.stringify(targets)}:
    try:
        with open(target, "w") as file:
            file.write("escaped")
        results.append("written")
    except OSError as error:
        results.append(type(error).__name__)
open("/tmp/private.txt", "w").write("tmp is private")
open("/workspace/result.txt", "w").write("kept")
print(results)`);
    expect(output).not.toContain("written");
    for (const target of targets) expect(existsSync(target)).toBe(false);
    // /workspace is private to the sandbox by default (sized, in memory): the file is there, not in a host folder.
    expect(await kernel.run('print(open("/workspace/result.txt").read())')).toBe("kept\n");
    expect(existsSync(path.join(kernel.workspace, "result.txt"))).toBe(false);
  });

  it("sees none of the host's files beyond the system and Python", async () => {
    const output = await kernel.run(`import os\nprint(sorted(os.listdir("/")), os.path.exists(${JSON.stringify(process.cwd())}), sorted(os.listdir("/etc")))`);
    expect(output).toContain("'workspace'");
    expect(output).toContain(" False ");
    expect(output).not.toContain("shadow");
    expect(output).not.toContain("'home'");
  });

  it("stops a memory bomb with a clear error, and the kernel keeps working", async () => {
    const single = await kernel.execute("x = bytearray(4 * 1024**3)");
    expect(single.output).toContain("MemoryError");
    expect(single.output).toContain("The sandbox limits memory to 1024 MB.");
    // Small steps fill the limit to the last byte: the kernel must still report it and run the next cells.
    // Filling 1 GB in 70-byte steps takes seconds on an idle machine and far longer on a busy one: a generous cell timeout.
    const growing = await kernel.execute("chunks = []\nwhile True:\n    chunks.append(str(len(chunks)) * 10)", { timeout: 240 });
    expect(growing.error?.type).toBe("MemoryError");
    expect(growing.output).toMatch(/^Traceback[\s\S]*chunks\.append[\s\S]*MemoryError\nThe sandbox limits memory to 1024 MB\.\n$/);
    expect(Number(await kernel.run("print(len(chunks))"))).toBeGreaterThan(1_000_000);
    expect(await kernel.run("chunks = None\nprint('alive')")).toBe("alive\n");
    expect(await kernel.run("more = bytearray(500 * 1024**2)\nprint(len(more))")).toBe(`${500 * 1024 ** 2}\n`);
  }, 300_000);

  it("stops a fork bomb with a clear error and leaves no process behind", async () => {
    const uid = Number(await kernel.run("import os\nprint(os.getuid())"));
    // Only this sandbox's processes count (its pid namespace), not those other tests run meanwhile as the same uid.
    const inside = processTree(kernel.pid!).find((pid) => pidNamespace(pid) !== pidNamespace(kernel.pid!));
    const namespace = pidNamespace(inside!)!;
    const processesOf = (uid: number, { zombies = true } = {}) => processesInNamespace(namespace, { uid, zombies });
    expect(processesOf(uid)).toHaveLength(1);
    const result = await kernel.execute("import os\nwhile True:\n    os.fork()");
    expect(result.output).toContain("BlockingIOError");
    expect(result.output).toContain("The sandbox allows at most 64 processes and threads; the cell reached it, so every other process in the sandbox was stopped.");
    expect(result.stateLost).toBe(false);
    expect(await waitUntil(() => processesOf(uid).length === 1)).toBe(true);
    expect(await kernel.run("print('alive')")).toBe("alive\n");
    await kernel.close();
    // Killed processes wait as zombies for the host's init to collect them; none of them runs.
    expect(await waitUntil(() => processesOf(uid, { zombies: false }).length === 0)).toBe(true);
  });

  it("limits file size", async () => {
    const small = await PythonKernel.start({ isolation: { backend: "bwrap", fileSizeMb: 1 } });
    const output = await small.run('open("big.bin", "wb").write(b"0" * 2 * 1024 * 1024)');
    expect(output).toContain("OSError: [Errno 27] File too large");
    expect(output).toContain("The sandbox limits files to 1 MB.");
    await small.close();
  });

  it("lends a caller's workspace and gives its files back to the owner on close", async () => {
    const workspace = tempDir("lllm-own-workspace-");
    writeFileSync(path.join(workspace, "input.txt"), "data from the host");
    const owned = await PythonKernel.start({ isolation: { backend: "bwrap", workspace } });
    expect(await owned.run('print(open("input.txt").read())\nopen("output.txt", "w").write("made inside")')).toBe("data from the host\n");
    await owned.close();
    expect(readFileSync(path.join(workspace, "output.txt"), "utf8")).toBe("made inside");
    expect(statSync(path.join(workspace, "output.txt")).uid).toBe(statSync(workspace).uid);
    expect(statSync(workspace).uid).toBe(process.getuid!());
    removeTempDir(workspace);
  });

  it("removes its temporary workspace on close", async () => {
    const temporary = await PythonKernel.start({ isolation: { backend: "bwrap" } });
    const workspace = temporary.workspace;
    expect(existsSync(workspace)).toBe(true);
    await temporary.close();
    expect(existsSync(workspace)).toBe(false);
  });
});
