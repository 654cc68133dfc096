import { spawn } from "node:child_process";
import { once } from "node:events";

/** The pid of a process that has ended (a node that exits at once): what a process killed with SIGKILL leaves. */
export async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid!;
}
