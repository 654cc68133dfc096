import { readFileSync } from "node:fs";
import { detectGvisor, GVISOR_HINT } from "../sandbox/detectGvisor.js";
import { BWRAP_HINT, detectIsolation } from "../sandbox/detectIsolation.js";
import { findPython } from "../sandbox/findPython.js";
import { missing, type DoctorCheck } from "./DoctorCheck.js";

/** What the machine offers, whatever the tactic: Node, Python, the sandboxes and user namespaces. */
export interface MachineNeeds {
  /** A tactic runs Python (run_python, code-action, notebook, tool_chain): its absence is a failure. */
  python: boolean;
  /** The sandbox backend a tactic asks for, when it runs model-written code (`auto` by default). */
  sandbox?: "auto" | "bwrap" | "gvisor" | "none";
}

/** The oldest Node lllm runs on (package.json's `engines`). */
const NODE_MINIMUM = [20, 19] as const;

export async function machineChecks(needs: MachineNeeds): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [nodeCheck()];
  checks.push(await pythonCheck(needs.python));
  const [bwrap, gvisor] = await Promise.all([detectIsolation(), detectGvisor()]);
  const sandbox = needs.sandbox;
  // `auto` takes either; a backend named in the tactic needs that one.
  const anyWorks = bwrap.backend === "bwrap" || gvisor.available;
  const bwrapNeeded = sandbox === "bwrap" || (sandbox === "auto" && !anyWorks);
  const gvisorNeeded = sandbox === "gvisor" || (sandbox === "auto" && !anyWorks);
  checks.push(
    bwrap.backend === "bwrap"
      ? { name: "bubblewrap", status: "ok", detail: `${bwrap.bwrap} starts a sandbox here` }
      : { name: "bubblewrap", status: missing(bwrapNeeded), detail: `${bwrap.reason ?? "unavailable"}: model-written code (run_python, code-action) cannot run in bubblewrap`, fix: BWRAP_HINT },
  );
  if (gvisor.available) checks.push({ name: "gvisor", status: "ok", detail: `${gvisor.runsc} starts a sandbox here${gvisor.rootless ? " (rootless)" : ""}` });
  else if (bwrap.backend === "bwrap" && !gvisorNeeded) checks.push({ name: "gvisor", status: "ok", detail: `${gvisor.reason ?? "unavailable"} (optional: bubblewrap works)` });
  else checks.push({ name: "gvisor", status: missing(gvisorNeeded), detail: gvisor.reason ?? "unavailable", fix: GVISOR_HINT });
  const userns = userNamespaces();
  if (userns) checks.push(userns);
  return checks;
}

function nodeCheck(): DoctorCheck {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const recent = major > NODE_MINIMUM[0] || (major === NODE_MINIMUM[0] && minor >= NODE_MINIMUM[1]);
  return recent
    ? { name: "node", status: "ok", detail: `Node ${process.versions.node}` }
    : { name: "node", status: "fail", detail: `Node ${process.versions.node} is older than lllm needs (${NODE_MINIMUM.join(".")})`, fix: "install Node 20.19 or newer (https://nodejs.org, or nvm install 22)" };
}

async function pythonCheck(needed: boolean): Promise<DoctorCheck> {
  try {
    const python = await findPython();
    return { name: "python3", status: "ok", detail: `Python ${python.version} (${python.executable})` };
  } catch (error) {
    const hint = (error as { hint?: string }).hint;
    return {
      name: "python3",
      status: missing(needed),
      detail: `${(error as Error).message}${needed ? "" : ": needed by run_python, code-action, notebooks and `lllm exec`"}`,
      fix: hint ?? "install Python 3.8 or newer (`apt-get install python3`)",
    };
  }
}

/**
 * Whether unprivileged user namespaces work: bubblewrap needs them when lllm is not root. Read from the kernel's
 * settings (Debian's switch, the general limit, Ubuntu's AppArmor restriction); the bubblewrap probe above is the
 * proof, this line says why it fails.
 */
function userNamespaces(): DoctorCheck | undefined {
  if (process.platform !== "linux") return undefined;
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      return undefined;
    }
  };
  const root = process.getuid?.() === 0;
  const max = read("/proc/sys/user/max_user_namespaces");
  const clone = read("/proc/sys/kernel/unprivileged_userns_clone");
  const apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  const off = max === "0" ? "user.max_user_namespaces is 0" : clone === "0" ? "kernel.unprivileged_userns_clone is 0" : apparmor === "1" ? "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)" : undefined;
  if (off === undefined) return { name: "user namespaces", status: "ok", detail: `available${max ? ` (max_user_namespaces ${max})` : ""}` };
  if (root) return { name: "user namespaces", status: "ok", detail: `${off}; lllm runs as root here and does not need them` };
  return { name: "user namespaces", status: "warn", detail: `${off}: bubblewrap cannot start a sandbox as this user`, fix: "allow them (sysctl -w kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or use gVisor" };
}
