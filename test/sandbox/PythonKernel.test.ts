import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxError, ToolError } from "../../src/errors.js";
import { BridgeError, closeAllKernels, PythonKernel, type PythonKernelOptions } from "../../src/sandbox/index.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

// Semantics of the interpreter (seed 000, Step 13) in a plain child process; isolation.test.ts covers bubblewrap.
const PRELUDE = `from lllm_bridge import call as _call, error_class
ToolBudgetExceeded = error_class("ToolBudgetExceeded")
def CALL_API(path, params):
    return _call("CALL_API", {"path": path, "params": params})
`;

const apiCalls: unknown[] = [];
const hostFunctions: PythonKernelOptions["hostFunctions"] = {
  CALL_API: async (args) => {
    apiCalls.push(args);
    const { path } = args as { path: string };
    return { city: path.split("/").pop(), temperature: 18.5, condition: "Clear" };
  },
  echo: (args) => args,
  sha256: (args) => createHash("sha256").update(String(args)).digest("hex"),
  bigString: (args) => "x".repeat(Number(args)),
  budget: () => {
    throw new BridgeError("ToolBudgetExceeded", "the tool-call budget of this program is used up");
  },
  badValue: () => {
    throw new BridgeError("ValueError", "days must be positive");
  },
  failing: () => {
    throw new ToolError("tool_failed", "the weather service is down");
  },
  plainError: () => {
    throw new Error("boom");
  },
  never: () => new Promise(() => {}),
  slow: async (args) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return args;
  },
};

function start(options: PythonKernelOptions = {}): Promise<PythonKernel> {
  return PythonKernel.start({ prelude: PRELUDE, hostFunctions, isolation: { backend: "none" }, ...options });
}

/** Whether `pid` runs; a zombie (killed, waiting for the host's init to collect it) does not. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** The limit of the timeout tests' cells, given per cell: every other cell may take as long as a busy machine needs. */
const SHORT = { timeout: 1 };

describe("PythonKernel (backend none)", () => {
  let kernel: PythonKernel;
  beforeAll(async () => {
    kernel = await start({ timeout: 120 });
  });
  afterAll(async () => {
    await closeAllKernels();
  });

  it("keeps variables across cells and calls the host through CALL_API (Step 13's Tokyo example)", async () => {
    apiCalls.length = 0;
    expect(await kernel.run('tokyo = CALL_API("weather/current/Tokyo", {})\nprint(tokyo["temperature"])')).toBe("18.5\n");
    expect(await kernel.run('print("Tokyo is", tokyo["condition"])')).toBe("Tokyo is Clear\n");
    expect(apiCalls).toEqual([{ path: "weather/current/Tokyo", params: {} }]);
  });

  it("returns only what the cell prints, from print, sys.stderr and subprocesses, in order", async () => {
    expect(await kernel.run("1 + 1")).toBe("");
    expect(await kernel.run("x = 41\nx + 1")).toBe("");
    const output = await kernel.run('import sys, subprocess\nprint("one")\nsys.stderr.write("two\\n")\nsubprocess.run(["echo", "three"])\nprint("four")');
    expect(output).toBe("one\ntwo\nthree\nfour\n");
  });

  it("returns a failing cell's traceback with only the user's frames, and the namespace survives", async () => {
    await kernel.run("kept = 'still here'\ndef divide(a, b):\n    return a / b");
    const result = await kernel.execute("divide(1, 0)");
    expect(result.output.split("\n").filter(Boolean).at(-1)).toBe("ZeroDivisionError: division by zero");
    expect(result.output).toMatch(/^Traceback \(most recent call last\):\n {2}File "<cell-\d+>", line 1, in <module>\n/);
    expect(result.output).toContain("in divide\n    return a / b");
    expect(result.output).not.toContain("kernel.py");
    expect(result.error).toEqual({ type: "ZeroDivisionError", message: "division by zero" });
    expect(await kernel.run("print(kept)")).toBe("still here\n");
  });

  it("keeps the output printed before an error, and reports syntax errors with their line", async () => {
    const output = await kernel.run('print("before")\nraise KeyError("missing")');
    expect(output.startsWith("before\nTraceback")).toBe(true);
    expect(output.trimEnd().endsWith("KeyError: 'missing'")).toBe(true);
    const syntax = await kernel.execute("x = (");
    expect(syntax.output).toContain("SyntaxError");
    expect(syntax.error?.type).toBe("SyntaxError");
  });

  it("treats exit() as the end of the cell, not of the kernel", async () => {
    expect(await kernel.run('print("bye")\nexit()')).toBe("bye\n");
    expect(await kernel.run("print(kept)")).toBe("still here\n");
  });

  it("interrupts a cell past the timeout with TimeoutError; the namespace survives", async () => {
    await kernel.run("counter = 7");
    // `except Exception` must not swallow the interrupt (if it did, the cell would sleep past the test's timeout).
    const result = await kernel.execute('import time\nprint("working")\ntry:\n    time.sleep(600)\nexcept Exception:\n    print("swallowed")', SHORT);
    expect(result.output).toContain("working\n");
    expect(result.output).not.toContain("swallowed");
    expect(result.output.trimEnd().endsWith("TimeoutError: cell exceeded the time limit of 1 s")).toBe(true);
    expect(result.error?.type).toBe("TimeoutError");
    expect(result.stateLost).toBe(false);
    expect(await kernel.run("print(counter)")).toBe("7\n");
  });

  it("interrupts a cell blocked in a host function that never answers", async () => {
    const result = await kernel.execute('from lllm_bridge import call\ncall("never", {})', SHORT);
    expect(result.error?.type).toBe("TimeoutError");
    expect(await kernel.run('print(CALL_API("weather/current/Oslo", {})["city"])')).toBe("Oslo\n");
  });

  it("honours a per-cell timeout", async () => {
    // Far longer than the limit: a busy machine cannot let the sleep end before the limit is noticed.
    const result = await kernel.execute("import time\ntime.sleep(60)\nprint('done')", { timeout: 0.2 });
    expect(result.output).toContain("time limit of 0.2 s");
  });

  it("raises host errors in Python with the class the host chose", async () => {
    const budget = await kernel.run('from lllm_bridge import call\ntry:\n    call("budget", {})\nexcept ToolBudgetExceeded as error:\n    print("caught", type(error).__name__, isinstance(error, RuntimeError), error)');
    expect(budget).toBe("caught ToolBudgetExceeded True the tool-call budget of this program is used up\n");
    const uncaught = await kernel.execute('call("budget", {})');
    expect(uncaught.output.trimEnd().split("\n").at(-1)).toBe("ToolBudgetExceeded: the tool-call budget of this program is used up");
    expect(uncaught.error?.type).toBe("ToolBudgetExceeded");
    expect((await kernel.run('call("failing")')).trimEnd().split("\n").at(-1)).toBe("ToolError: the weather service is down");
    expect((await kernel.run('call("plainError")')).trimEnd().split("\n").at(-1)).toBe("ToolError: boom");
    expect(await kernel.run('try:\n    call("badValue")\nexcept ValueError as error:\n    print("builtin", error)')).toBe("builtin days must be positive\n");
    const unknown = await kernel.run('call("nope")');
    expect(unknown).toContain('NameError: no host function named "nope"; available: CALL_API, badValue');
  });

  it("carries 5 MB values both ways", async () => {
    const size = 5 * 1024 * 1024;
    const big = "é".repeat(size / 2);
    const expected = createHash("sha256").update(big).digest("hex");
    const { output } = await kernel.execute(`import hashlib
from lllm_bridge import call
big = "é" * ${size / 2}
back = call("echo", {"text": big})["text"]
print(back == big, call("sha256", big) == hashlib.sha256(big.encode()).hexdigest(), len(call("bigString", ${size})))`);
    expect(output).toBe("True True 5242880\n");
    expect(expected).toHaveLength(64);
  }, 150_000);

  it("refuses messages past the bridge's 64 MB, on both sides, and keeps working", async () => {
    const tooBig = (await kernel.execute('from lllm_bridge import call\ncall("echo", "x" * (65 * 2**20))')).output;
    expect(tooBig.trimEnd().split("\n").at(-1)).toBe("ValueError: the arguments of echo take 65 MB; the bridge carries at most 64 MB a call (pass a file in the workspace instead)");
    // Code that writes a runaway line on the protocol pipe itself: the host drops it instead of buffering it.
    const { output: forged } = await kernel.execute(`import os, lllm_bridge
fd = lllm_bridge.call.__globals__["_WFD"]
data = memoryview(b"x" * (70 * 2**20) + b"\\n")
while data:
    data = data[os.write(fd, data):]
print("written")`);
    expect(forged).toBe("written\n");
    expect(await kernel.run('print(CALL_API("weather/current/Lima", {})["city"])')).toBe("Lima\n");
  }, 150_000);

  it("serves host calls from the program's threads", async () => {
    const output = await kernel.run(`import threading
from lllm_bridge import call
results = {}
def work(n):
    results[n] = [call("slow", {"n": n, "i": i})["i"] for i in range(20)]
threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(all(results[n] == list(range(20)) for n in range(8)), len(results))`);
    expect(output).toBe("True 8\n");
  });

  it("runs concurrent run() calls one at a time, in order", async () => {
    await kernel.run("import time\nlog = []");
    const cell = (n: number): string => `log.append(("start", ${n}))\ntime.sleep(0.05)\nlog.append(("end", ${n}))\nprint(${n})`;
    const outputs = await Promise.all([kernel.run(cell(1)), kernel.run(cell(2)), kernel.run(cell(3))]);
    expect(outputs).toEqual(["1\n", "2\n", "3\n"]);
    expect(await kernel.run("print(log)")).toBe("[('start', 1), ('end', 1), ('start', 2), ('end', 2), ('start', 3), ('end', 3)]\n");
  });

  it("keeps the protocol intact when the code writes to the kernel's file descriptors", async () => {
    const output = await kernel.run('import os\nos.write(1, b\'{"type":"result","id":1,"output":"forged"}\\n\')\nos.write(2, b"raw stderr\\n")\nprint("after")');
    expect(output).toBe('{"type":"result","id":1,"output":"forged"}\nraw stderr\nafter\n');
    expect(await kernel.run("print(kept)")).toBe("still here\n");
  });

  it("reset() clears the variables but keeps what the prelude defines", async () => {
    await kernel.run("leftover = 1");
    await kernel.reset();
    expect(await kernel.run("print(leftover)")).toContain("NameError: name 'leftover' is not defined");
    expect(await kernel.run('print(CALL_API("weather/current/Paris", {})["city"])')).toBe("Paris\n");
  });
});

describe("PythonKernel output limit", () => {
  afterAll(async () => {
    await closeAllKernels();
  });

  it("cuts output past maxOutputChars and appends the indicator; 0 means no limit", async () => {
    const limited = await start({ maxOutputChars: 10 });
    expect(await limited.run('print("a" * 50)')).toBe("aaaaaaaaaa... (truncated)");
    expect(await limited.run('print("short")')).toBe("short\n");
    const custom = await start({ maxOutputChars: 5, truncationIndicator: "[cut]" });
    expect(await custom.run('print("é" * 20)')).toBe("ééééé[cut]");
    const unlimited = await start({ maxOutputChars: 0 });
    expect(await unlimited.run('print("b" * 200000)')).toBe(`${"b".repeat(200000)}\n`);
    const standard = await start();
    expect(await standard.run('print("c" * 6000)')).toBe(`${"c".repeat(5000)}... (truncated)`);
  });
});

describe("PythonKernel lifecycle", () => {
  afterAll(async () => {
    await closeAllKernels();
  });

  it("kills and restarts a kernel whose cell ignores the interrupt, and says the variables were lost", async () => {
    const kernel = await start();
    await kernel.run("value = 1");
    // The cell never ends by itself: only the kill can finish this test before its timeout.
    const result = await kernel.execute("import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass", { timeout: 0.5 });
    expect(result.output).toContain("TimeoutError: cell exceeded the time limit of 0.5 s");
    expect(result.output).toContain("The kernel was restarted; all variables were lost.");
    expect(result.stateLost).toBe(true);
    const next = await kernel.execute("print(value)");
    expect(next.restarted).toBe(true);
    expect(next.output).toContain("NameError");
    expect(await kernel.run('print(CALL_API("weather/current/Rome", {})["city"])')).toBe("Rome\n");
  });

  it("reports a kernel that dies (os._exit) and restarts it for the next cell", async () => {
    const kernel = await start();
    await kernel.run("value = 1");
    const firstPid = kernel.pid!;
    const result = await kernel.execute("import os\nos._exit(3)");
    expect(result.output).toBe("the kernel exited with code 3 (the code ended the Python process, e.g. with os._exit)\nThe kernel was restarted; all variables were lost.");
    expect(result.error?.type).toBe("KernelDied");
    expect(result.stateLost).toBe(true);
    const next = await kernel.execute("print('value' in globals())");
    expect(next).toEqual({ output: "False\n", stateLost: false, restarted: true });
    expect(kernel.pid).not.toBe(firstPid);
  });

  it("names the CPU time limit when the kernel reaches it", async () => {
    // The wall-clock limit must not win: on a busy machine a CPU second can take many seconds to use up.
    const kernel = await start({ isolation: { backend: "none", cpuSeconds: 1 }, timeout: 240 });
    const result = await kernel.execute("while True:\n    pass");
    expect(result.output).toBe("the kernel died (signal SIGXCPU): it used up its CPU time limit of 1 s\nThe kernel was restarted; all variables were lost.");
    expect(result.stateLost).toBe(true);
  }, 300_000);

  it("notices a kernel that died between cells and says so in the next cell", async () => {
    const kernel = await start();
    // The kernel ends itself once the cell is over and the test says so (a file appears), not after a delay: on a busy
    // machine the cell's own result could come later than a delay, and the death would be this cell's.
    const signal = path.join(tempDir("lllm-kernel-exit-"), "now");
    await kernel.run(`import os, threading, time\ndef end():\n    while not os.path.exists(${JSON.stringify(signal)}):\n        time.sleep(0.01)\n    os._exit(1)\nthreading.Thread(target=end).start()`);
    const pid = kernel.pid!;
    writeFileSync(signal, "");
    expect(await waitUntil(() => !isAlive(pid))).toBe(true);
    // The host has handled the exit (it forgets the process) before the next cell: no timer guesses when.
    expect(await waitUntil(() => kernel.pid === undefined)).toBe(true);
    expect(await kernel.run("print('hello')")).toBe("(the kernel was restarted; all variables from earlier cells were lost)\nhello\n");
  });

  it("an abort kills a cell with no time limit at once, with what it started; the next cell says the variables were lost", async () => {
    const kernel = await start({ timeout: 0 });
    await kernel.run("value = 1");
    const controller = new AbortController();
    const cell = kernel.execute('import subprocess\nprint(subprocess.Popen(["sleep", "600"]).pid, flush=True)\nimport time\ntime.sleep(600)', { signal: controller.signal });
    const pid = kernel.pid!;
    // Abort once the cell runs: its `sleep` child exists.
    expect(await waitUntil(() => readChildren(pid).length > 0)).toBe(true);
    const sleeper = readChildren(pid)[0]!;
    controller.abort(new Error("stop now"));
    await expect(cell).rejects.toThrow("stop now");
    expect(await waitUntil(() => !isAlive(pid) && !isAlive(sleeper))).toBe(true);
    expect(await kernel.run("print('value' in globals())")).toBe("(the kernel was restarted; all variables from earlier cells were lost)\nFalse\n");
    await kernel.close();
  });

  it("close() leaves no process behind, including what the code started", async () => {
    const kernel = await start();
    const child = Number(await kernel.run('import subprocess\np = subprocess.Popen(["sleep", "60"])\nprint(p.pid)'));
    const pid = kernel.pid!;
    expect(isAlive(pid)).toBe(true);
    expect(isAlive(child)).toBe(true);
    await kernel.close();
    expect(await waitUntil(() => !isAlive(pid) && !isAlive(child))).toBe(true);
    expect(() => process.kill(pid, 0)).toThrow();
    await kernel.close(); // twice is fine
    await expect(kernel.run("print(1)")).rejects.toThrow(SandboxError);
  });

  it("closeAllKernels() closes every live kernel", async () => {
    const kernels = await Promise.all([start(), start()]);
    const pids = kernels.map((kernel) => kernel.pid!);
    await closeAllKernels();
    expect(await waitUntil(() => pids.every((pid) => !isAlive(pid)))).toBe(true);
  });

  it("fails to start with a clear SandboxError when the prelude is broken", async () => {
    const failure = start({ prelude: "import no_such_module_here" });
    await expect(failure).rejects.toThrow(SandboxError);
    await expect(failure).rejects.toThrow(/prelude failed:[\s\S]*ModuleNotFoundError: No module named 'no_such_module_here'/);
  });

  it("fails to start with a clear SandboxError when Python is missing", async () => {
    await expect(start({ python: "no-such-python-3" })).rejects.toMatchObject({ code: "sandbox_unavailable", message: expect.stringContaining("not found on PATH") });
  });
});

/** The pids of a process's children (/proc), for waiting until a cell's subprocess runs. */
function readChildren(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number));
  } catch {
    return [];
  }
}
