import { spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/codeaction/index.js";
import { closeAllKernels, PythonKernel, type ResolvedBackend } from "../../src/sandbox/index.js";
import { BACKENDS, program } from "../codeaction/helpers.js";
import { BIN, emptyHome, ROOT } from "../helpers/runCli.js";
import { AS_ROOT, NOBODY, openToOthers, runCliAs } from "../helpers/runCliAs.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

// The sandbox's walls, for every isolating backend this machine has (CI has both: see ciRequirements.test.ts), as a
// user would meet them: the real CLI with descriptors and secrets of its parent, programs that fork, fill the disk,
// or leave children behind. The `none` backend joins where it promises something too (descriptors, children).
const SECRET = "sk-battery-secret-4f1d";
const folders: string[] = [];
const started: number[] = [];

function temporary(prefix: string): string {
  const folder = tempDir(prefix);
  folders.push(folder);
  return folder;
}

afterAll(async () => {
  await closeAllKernels();
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL"); // only a probe this file started, if a test failed and left it
    } catch {
      // gone, as it should be
    }
  }
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `lllm exec --sandbox <backend> --file <code>` (a cell time limit, and a kill of the CLI, far above what a busy
 * machine needs: no probe here is about time) with a secret in its environment, started by a shell that first
 * opens `hostOpen` (paths) on fds 200, 201, ... as `exec 200<file` does: descriptors without close-on-exec. (Node
 * marks its lowest inherited descriptors close-on-exec at start, not high ones like these.)
 */
function exec(backend: ResolvedBackend, code: string, hostOpen: string[] = []): Promise<ExecResult> {
  const file = path.join(temporary("lllm-battery-code-"), "probe.py");
  writeFileSync(file, code);
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1", OPENAI_API_KEY: SECRET, LLLM_TEST_SECRET: SECRET };
    folders.push(env.LLLM_HOME);
    const opens = hostOpen.map((_, index) => `${200 + index}<"$${index + 1}"`).join(" ");
    const script = `${opens ? `exec ${opens} && ` : ""}shift ${hostOpen.length}; exec "$@"`;
    // --norc: bash reads ~/.bashrc when its stdin is a socket (Node's pipes are), and the machine's rc file (pyenv's
    // `rehash` waits 60 s on a lock a killed shell left) must not decide what this test sees.
    const args = ["--norc", "--noprofile", "-c", script, "sh", ...hostOpen, process.execPath, BIN, "exec", "--sandbox", backend, "--timeout", "120", "--file", file];
    const child = spawn("/bin/bash", args, { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, stdout, stderr });
    });
    child.stdin!.end();
  });
}

/** Host processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) found.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

const DESCRIPTOR_PROBE = `import os
seen = []
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    seen.append(f"{fd} -> {target}")
    if fd > 2 and not target.startswith(("pipe:", "socket:", "anon_inode:", "host:")):  # the kernel's own pipes (gVisor: host:) would block
        try:
            seen.append(os.read(fd, 200).decode("utf-8", "replace"))
        except OSError as error:
            seen.append(type(error).__name__)
        try:
            seen.append(" ".join(os.listdir(fd)))
        except (OSError, TypeError) as error:
            seen.append(type(error).__name__)
print("\\n".join(seen))
print("fds:", len(os.listdir("/proc/self/fd")))`;

describe.each([...BACKENDS, "none" as const])("the sandbox (%s) and what its host holds", (backend) => {
  it("passes no descriptor of lllm's parent to the code: a file and a folder open on the host side stay out", async () => {
    const folder = temporary("lllm-battery-host-");
    writeFileSync(path.join(folder, "credentials"), SECRET);
    writeFileSync(path.join(folder, "visible-only-through-a-descriptor"), "");
    const result = await exec(backend, DESCRIPTOR_PROBE, [path.join(folder, "credentials"), folder]);
    expect(result.stderr).not.toContain("Traceback");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("fds:");
    expect(result.stdout).not.toContain(SECRET);
    expect(result.stdout).not.toContain("visible-only-through-a-descriptor");
    expect(result.stdout).not.toContain(folder);
  }, 240_000);

  it("ends every process the code started, also those that left its session, when the run ends", async () => {
    const marker = String(9_000_000 + Math.floor(Math.random() * 900_000));
    const result = await exec(
      backend,
      `import subprocess, time
subprocess.Popen(["sleep", "${marker}"], start_new_session=True)
subprocess.run(["sh", "-c", "setsid sleep ${marker}.5 >/dev/null 2>&1 & exit 0"])
time.sleep(0.5)
print("started")`,
    );
    expect(result.stdout).toContain("started");
    started.push(...processesWith(`sleep\0${marker}`));
    expect(await waitUntil(() => processesWith(`sleep\0${marker}`).length === 0)).toBe(true);
  }, 240_000);
});

describe.each(BACKENDS)("the sandbox (%s) and its limits", (backend) => {
  it("keeps secrets of lllm's environment away from the code", async () => {
    const result = await exec(
      backend,
      `import os
seen = [repr(dict(os.environ))]
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for name in ("environ", "cmdline"):
            try:
                seen.append(open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
print("\\n".join(seen))`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(SECRET);
    // The sandbox's first process shows no host path either (bwrap's options, the kernel's temporary folder).
    expect(result.stdout).not.toContain("lllm-kernel-");
  }, 240_000);

  it("holds the memory limit for all the sandbox's processes together, and tells the model which key raises it", async () => {
    const kernel = await PythonKernel.start({ isolation: { backend, memoryMb: 256 }, timeout: 120 });
    try {
      const result = await kernel.execute(`import subprocess, sys
child = "b = bytearray(100 << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1\\nimport time; time.sleep(30)"
children = [subprocess.Popen([sys.executable, "-c", child]) for _ in range(4)]
for each in children: each.wait()
print("all four ran")`);
      expect(result.output).not.toContain("all four ran");
      expect(result.error?.type).toBe("KernelDied");
      expect(result.output).toContain("past its limit of 256 MB");
      expect(result.output).toContain("memory_limit");
      expect(await kernel.run("print('alive')")).toContain("alive");
    } finally {
      await kernel.close();
    }
  }, 240_000);

  it("caps /workspace for `lllm exec` (a private, sized folder), and says so when it is full", async () => {
    const result = await exec(
      backend,
      `written = 0
try:
    for n in range(40):
        with open(f"/workspace/fill{n}", "wb") as file:
            for _ in range(10):
                file.write(b"x" * (1 << 20))
                written += 1
finally:
    print("written MB:", written)`,
    );
    const written = Number(/written MB: (\d+)/.exec(result.stdout)?.[1]);
    expect(written).toBeLessThanOrEqual(256);
    expect(result.stdout).toContain("No space left on device");
    expect(result.stdout).toContain("workspace_size");
    expect(result.code, result.stderr).toBe(1);
  }, 240_000);

  it("caps what a program stores with artifacts.put, with an error that names the limit", async () => {
    const store = new ArtifactStore(path.join(temporary("lllm-battery-artifacts-"), "artifacts"), { maxMb: 1 });
    const outcome = await program(
      `stored = 0
try:
    for n in range(10):
        path = f"/workspace/part{n}.bin"
        open(path, "wb").write(bytes([n]) * 300_000)
        artifacts.put(path, "application/octet-stream")
        stored += 1
except Exception as error:
    print(type(error).__name__, error)
print("stored", stored)`,
      [],
      { backend, artifacts: store },
    );
    expect(outcome.output).toContain("stored 3");
    expect(outcome.output).toContain("ArtifactQuotaExceeded");
    expect(outcome.output).toContain("workspace_size");
    expect(store.list().reduce((total, record) => total + record.size, 0)).toBeLessThanOrEqual(1024 * 1024);
  }, 240_000);
});

// gVisor has a kernel of its own, but it grants user namespaces too: `unshare -Ur` made the code root inside it.
describe.each(BACKENDS)("the %s sandbox's system calls", (backend) => {
  it("refuses new user namespaces, mounts and tracing", async () => {
    const result = await exec(
      backend,
      `import ctypes, subprocess
libc = ctypes.CDLL(None, use_errno=True)
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
print("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
print("ptrace", libc.ptrace(16, 1, 0, 0), ctypes.get_errno())
print("unshare -Ur", subprocess.run(["unshare", "-Ur", "id", "-u"], capture_output=True, text=True).stdout.strip() or "refused")
print(subprocess.run(["echo", "children still start"], capture_output=True, text=True).stdout.strip())`,
    );
    expect(result.stdout).toContain("unshare -1 1");
    expect(result.stdout).toContain("mount -1 1");
    expect(result.stdout).toContain("ptrace -1 1");
    expect(result.stdout).toContain("unshare -Ur refused");
    expect(result.stdout).toContain("children still start");
  }, 240_000);
});

/**
 * Writes as much as it may (up to 300 MB) to each place a program might fill, in files under the file size limit:
 * the scratch space (/dev/shm, then /tmp, with the first's files kept), the root and what bwrap makes in it, /dev,
 * and /workspace. Prints, for each, the MB written and the errno that stopped it, as JSON.
 */
const FILL_PROBE = `import errno, json, os
def fill(folder, keep=False):
    written, stopped = 0, None
    names = []
    try:
        for n in range(6):
            name = os.path.join(folder, f"fill{folder.replace('/', '-')}-{n}")  # /tmp's names differ from /dev/shm's
            names.append(name)
            with open(name, "wb") as file:
                for _ in range(5):
                    file.write(b"x" * (10 << 20))
                    file.flush()
                    written += 10
    except OSError as error:
        stopped = errno.errorcode.get(error.errno, str(error.errno))
    return {"mb": written, "errno": stopped}, names
seen, kept = {}, []
for folder in ["/dev/shm", "/tmp"]:
    seen[folder], names = fill(folder)
    kept += names
for folder in ["/", "/dev", "/etc", "/lllm", "/workspace"]:
    seen[folder], names = fill(folder)
    for name in names:
        try: os.unlink(name)
        except OSError: pass
for name in kept:
    try: os.unlink(name)
    except OSError: pass
try:
    import multiprocessing
    multiprocessing.Lock()
    seen["semaphore"] = "ok"
except OSError as error:
    seen["semaphore"] = errno.errorcode.get(error.errno, str(error.errno))
print("FILLED " + json.dumps(seen))`;

interface Filled {
  [place: string]: { mb: number; errno: string | null };
}

function filled(result: ExecResult): Filled & { semaphore: string } {
  const line = /^FILLED (.*)$/m.exec(result.stdout)?.[1];
  expect(line, `no result from the probe: ${result.stdout}${result.stderr}`).toBeDefined();
  return JSON.parse(line!) as Filled & { semaphore: string };
}

/** The same probe through `lllm exec` as user nobody, with a home and a TMPDIR of its own. */
async function execAsNobody(backend: ResolvedBackend, code: string): Promise<ExecResult> {
  const folder = temporary("lllm-battery-nobody-");
  const file = path.join(folder, "probe.py");
  writeFileSync(file, code);
  for (const name of ["home", "tmp"]) mkdirSync(path.join(folder, name), { mode: 0o700 });
  for (const name of ["home", "tmp"]) chownSync(path.join(folder, name), NOBODY, NOBODY);
  chmodSync(folder, 0o755);
  chmodSync(file, 0o644);
  const undo = openToOthers(folder);
  try {
    const env = { PATH: process.env.PATH, HOME: path.join(folder, "home"), LLLM_HOME: path.join(folder, "home"), TMPDIR: path.join(folder, "tmp"), NO_COLOR: "1" };
    return await runCliAs(NOBODY, ["exec", "--sandbox", backend, "--timeout", "120", "--file", file], { env });
  } finally {
    undo();
  }
}

// bwrap without root made / and /dev tmpfs of no size that the code's user owned, and mounted nothing at /dev/shm:
// a program wrote gigabytes there, in memory no process's size shows, so the memory limit never saw them either.
describe.each(BACKENDS)("what a program may write in the %s sandbox", (backend) => {
  const users = [{ who: AS_ROOT ? "root" : "this user", run: (code: string) => exec(backend, code) }, ...(AS_ROOT ? [{ who: "nobody", run: (code: string) => execAsNobody(backend, code) }] : [])];
  it.each(users)("is bounded everywhere when lllm runs as $who: the scratch space and /workspace are full at their sizes, the rest is read-only", async ({ run }) => {
    const result = await run(FILL_PROBE);
    const seen = filled(result);
    // /dev/shm and /tmp share the file_size (default 100 MB): under bubblewrap one tmpfs, under gVisor /dev/shm is not writable.
    expect(seen["/dev/shm"]!.mb + seen["/tmp"]!.mb).toBeLessThanOrEqual(100);
    expect(seen["/tmp"]!.errno).toBe("ENOSPC");
    expect(["ENOSPC", "EACCES"]).toContain(seen["/dev/shm"]!.errno);
    for (const place of ["/", "/dev", "/etc", "/lllm"]) {
      expect(seen[place], place).toEqual({ mb: 0, errno: expect.stringMatching(/^(EROFS|EACCES)$/) });
    }
    expect(seen["/workspace"]!.mb).toBeLessThanOrEqual(256); // workspace_size's default
    expect(seen["/workspace"]!.errno).toBe("ENOSPC");
    // What the scratch space is for: multiprocessing's locks are POSIX semaphores in /dev/shm.
    if (backend === "bwrap") expect(seen.semaphore).toBe("ok");
    expect(result.code, result.stderr).toBe(0);
  }, 240_000);
});

/**
 * Tries to hold 1400 MB, past the default memory_limit (1024 MB), where no process's size shows it: 700 MB in
 * anonymous files (memfd_create) and 700 MB in System V shared memory segments (written, then detached), in 50 MB
 * pieces, stopping at the first refusal; then one semaphore set and one message queue, the rest of System V IPC.
 * Then what multiprocessing needs: a lock and a SharedMemory (POSIX semaphores and shared memory, files in /dev/shm).
 * Prints, as JSON, the MB held and the errno that stopped each.
 */
const HIDDEN_MEMORY_PROBE = `import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
IPC_PRIVATE, IPC_CREAT, PIECE = 0, 0o1000, 50 << 20
def name(number):
    return errno.errorcode.get(number, str(number))
seen, files = {}, []
held, stopped = 0, None
try:
    while held < 700:
        fd = os.memfd_create("probe")
        files.append(fd)
        for _ in range(5):
            os.write(fd, b"x" * (10 << 20))
        held += 50
except OSError as error:
    stopped = name(error.errno)
seen["memfd"] = {"mb": held, "errno": stopped}
held, stopped = 0, None
while held < 700:
    ident = libc.shmget(IPC_PRIVATE, PIECE, IPC_CREAT | 0o600)
    if ident < 0:
        stopped = name(ctypes.get_errno())
        break
    address = libc.shmat(ident, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        stopped = name(ctypes.get_errno())
        break
    libc.memset(address, 1, PIECE)
    libc.shmdt(address)
    held += 50
seen["shm"] = {"mb": held, "errno": stopped}
seen["semget"] = "ok" if libc.semget(IPC_PRIVATE, 10, IPC_CREAT | 0o600) >= 0 else name(ctypes.get_errno())
seen["msgget"] = "ok" if libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600) >= 0 else name(ctypes.get_errno())
import multiprocessing
from multiprocessing import shared_memory
try:
    multiprocessing.Lock()
    seen["lock"] = "ok"
except OSError as error:
    seen["lock"] = name(error.errno)
try:
    block = shared_memory.SharedMemory(create=True, size=1 << 20)
    block.buf[0] = 7
    block.close()
    block.unlink()
    seen["sharedMemory"] = "ok"
except OSError as error:
    seen["sharedMemory"] = name(error.errno)
print("HIDDEN " + json.dumps(seen))`;

// Memory in anonymous files and System V IPC belongs to no process: the watchdog, which sums the processes' memory,
// never saw it, and a program held gigabytes past memory_limit until its sandbox ended. Both are refused (ENOSYS).
describe.each(BACKENDS)("memory that no process of the %s sandbox holds", (backend) => {
  const users = [{ who: AS_ROOT ? "root" : "this user", run: (code: string) => exec(backend, code) }, ...(AS_ROOT ? [{ who: "nobody", run: (code: string) => execAsNobody(backend, code) }] : [])];
  it.each(users)("is refused when lllm runs as $who: no anonymous file, no System V IPC, while multiprocessing still works", async ({ run }) => {
    const result = await run(HIDDEN_MEMORY_PROBE);
    const line = /^HIDDEN (.*)$/m.exec(result.stdout)?.[1];
    expect(line, `no result from the probe: ${result.stdout}${result.stderr}`).toBeDefined();
    const seen = JSON.parse(line!) as Record<string, unknown>;
    expect(seen.memfd).toEqual({ mb: 0, errno: "ENOSYS" });
    expect(seen.shm).toEqual({ mb: 0, errno: "ENOSYS" });
    expect(seen.semget).toBe("ENOSYS");
    expect(seen.msgget).toBe("ENOSYS");
    // POSIX semaphores and shared memory are files in the sized /dev/shm. gVisor's /dev/shm is its root's and not
    // writable (see the probe above), so multiprocessing's locks fail there as they did before.
    if (backend === "bwrap") expect({ lock: seen.lock, sharedMemory: seen.sharedMemory }).toEqual({ lock: "ok", sharedMemory: "ok" });
    expect(result.code, result.stderr).toBe(0);
  }, 240_000);
});
