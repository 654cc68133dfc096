import { execFile } from "node:child_process";
import { SandboxError } from "../errors.js";

/** Where a Python interpreter lives: what a sandbox must mount for it to run. */
export interface PythonInstall {
  /** The interpreter to start, as Python reports it (a venv's own `bin/python`, not the file it links to). */
  executable: string;
  /** Folders the interpreter reads: its prefixes (a venv and its base) and the real executable's folder. */
  folders: string[];
  version: string;
}

const REPORT = `import json, os, sys
print(json.dumps({"executable": sys.executable, "real": os.path.realpath(sys.executable),
  "folders": sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}),
  "version": "%d.%d.%d" % sys.version_info[:3], "ok": sys.version_info >= (3, 8)}))`;

const found = new Map<string, Promise<PythonInstall>>();

/**
 * Ask `command` (default `python3` on PATH) where its interpreter really is, once per process. Starting the real
 * executable instead of the command saves the wrapper's start on every kernel (pyenv's shim is a shell script).
 */
export function findPython(command = "python3"): Promise<PythonInstall> {
  let install = found.get(command);
  if (install === undefined) {
    install = ask(command);
    found.set(command, install);
    install.catch(() => found.delete(command)); // a failure is not cached: the user may install Python and retry
  }
  return install;
}

function ask(command: string): Promise<PythonInstall> {
  return new Promise((resolve, reject) => {
    execFile(command, ["-I", "-S", "-c", REPORT], { timeout: 30_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const hint = "Install Python 3.8 or newer (`apt-get install python3`), or point the kernel's `python` option at one.";
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
        const detail = missing ? "it was not found on PATH" : (stderr.trim() || error.message);
        reject(new SandboxError("sandbox_unavailable", `cannot run Python \`${command}\`: ${detail}`, { hint, cause: error }));
        return;
      }
      try {
        const report = JSON.parse(stdout) as { executable: string; real: string; folders: string[]; version: string; ok: boolean };
        if (!report.ok) throw new Error(`Python ${report.version} is too old`);
        const folders = [...report.folders];
        const realFolder = report.real.slice(0, report.real.lastIndexOf("/"));
        if (!folders.some((folder) => realFolder === folder || realFolder.startsWith(`${folder}/`))) folders.push(realFolder);
        resolve({ executable: report.executable || report.real, folders, version: report.version });
      } catch (cause) {
        reject(new SandboxError("sandbox_unavailable", `cannot use Python \`${command}\`: ${(cause as Error).message}`, { hint, cause }));
      }
    });
  });
}
