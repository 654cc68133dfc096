import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeAllKernels } from "../../src/sandbox/index.js";
import { tool } from "../../src/tools/index.js";
import { startCanaryServer, type CanaryServer } from "../helpers/canaryServer.js";
import { tempDir } from "../helpers/tempTree.js";
import { BACKENDS, program } from "./helpers.js";

// Each case runs programs in a sandbox (a fork bomb, a memory bomb; gVisor starts slowly): on a busy machine more
// than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// Attacks from inside a code-action program, under every isolating backend this machine has. Each must fail,
// and the host (this process) must go on running programs.
const SECRET = "sk-codeaction-secret-9b2e";
const echo = tool({ name: "echo", description: "Echo", parameters: { text: { type: "string" } }, run: ({ text }) => text });
let canary: CanaryServer;
let port = 0;
const hostFolder = tempDir("lllm-host-secrets-");
const secretFile = path.join(hostFolder, "credentials");

beforeAll(async () => {
  vi.stubEnv("LLLM_TEST_SECRET", SECRET);
  writeFileSync(secretFile, SECRET);
  canary = await startCanaryServer();
  port = canary.port;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await closeAllKernels();
  await canary.close();
});

describe.skipIf(BACKENDS.length === 0).each(BACKENDS)("a code-action program under %s", (backend) => {
  it("cannot read the host's secrets: its environment, other processes' environments, or the host's files", async () => {
    const outcome = await program(
      `import os
seen = [repr(dict(os.environ))]
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            seen.append(open(f"/proc/{pid}/environ", "rb").read().decode("utf-8", "replace"))
        except OSError:
            pass
for target in [${JSON.stringify(secretFile)}, "/root/.bashrc", "/etc/shadow"]:
    try:
        seen.append(open(target).read())
    except OSError as error:
        seen.append(type(error).__name__)
print("\\n".join(seen))`,
      [echo],
      { backend },
    );
    expect(outcome.status).toBe("ok");
    expect(outcome.output).not.toContain(SECRET);
    expect(outcome.output).not.toContain("LLLM_TEST_SECRET");
  });

  it("cannot reach a server on the host's 127.0.0.1", async () => {
    const outcome = await program(
      `import socket, urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=3).read()
    print("reached")
except OSError as error:
    print("failed:", type(error).__name__)`,
      [echo],
      { backend },
    );
    expect(outcome.answer).toMatch(/^failed: /);
    expect(canary.requests()).toBe(0);
  });

  it("cannot write outside its workspace", async () => {
    const targets = [path.join(hostFolder, "escape.txt"), path.join(process.cwd(), "escape.txt"), "/usr/escape.txt", "/etc/escape.txt"];
    const outcome = await program(
      `results = []
for target in ${JSON.stringify(targets)}:
    try:
        open(target, "w").write("escaped")
        results.append("written")
    except OSError as error:
        results.append(type(error).__name__)
open("/workspace/inside.txt", "w").write("fine")
print(results)`,
      [echo],
      { backend },
    );
    expect(outcome.status).toBe("ok");
    expect(outcome.output).not.toContain("written");
    for (const target of targets) expect(existsSync(target)).toBe(false);
  });

  it("a fork bomb fails, and the host goes on", async () => {
    const outcome = await program("import os\nwhile True:\n    os.fork()", [echo], { backend });
    expect(outcome.status).toBe("error");
    expect(outcome.error).toContain("BlockingIOError");
    expect((await program('print(echo(text="alive"))', [echo], { backend })).answer).toBe("alive");
  });

  it("a memory bomb fails, and the host goes on", async () => {
    const outcome = await program("chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 1024 * 1024))", [echo], { backend });
    expect(outcome.status).toBe("error");
    expect(outcome.error).toContain("MemoryError");
    expect((await program('print(echo(text="alive"))', [echo], { backend })).answer).toBe("alive");
    expect(readFileSync(secretFile, "utf8")).toBe(SECRET);
  });
});
