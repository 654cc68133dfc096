import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * Why network namespaces cannot be made here (`ip netns add` needs root and iproute2), or undefined when they can:
 * probed once by making and removing one.
 */
export function netnsUnavailable(): string | undefined {
  if (spawnSync("ip", ["-V"], { stdio: "ignore" }).status !== 0) return "iproute2 (`ip`) is not installed";
  if (process.getuid?.() !== 0) return "`ip netns` needs root";
  const probe = `lllmprobe${randomBytes(3).toString("hex")}`;
  const made = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (made.status !== 0) return `\`ip netns add\` is not allowed here: ${made.stderr.trim()}`;
  spawnSync("ip", ["netns", "del", probe]);
  return undefined;
}

/**
 * Hosts in network namespaces of their own, joined by veth links to a bridge in a hub namespace: a small network
 * of machines on one machine. Addresses are in 198.18.0.0/24 (RFC 2544's range for tests), on links that reach
 * nothing outside these namespaces. `remove()` deletes every namespace (and so every link).
 */
export class NetnsLab {
  readonly #prefix = `lllm${randomBytes(3).toString("hex")}`;
  readonly #namespaces: string[] = [];
  readonly #children: ChildProcess[] = [];
  #hosts = 0;

  constructor() {
    const hub = this.#namespace("hub");
    run(["netns", "exec", hub, "ip", "link", "add", "br0", "type", "bridge"]);
    run(["netns", "exec", hub, "ip", "link", "set", "br0", "up"]);
  }

  /** A new host on the network: its namespace's name and address. */
  host(name: string): { namespace: string; address: string } {
    const namespace = this.#namespace(name);
    const index = ++this.#hosts;
    const address = `198.18.0.${index}`;
    const inside = `v${index}`;
    const outside = `${this.#prefix}b${index}`.slice(-15);
    run(["link", "add", inside, "netns", namespace, "type", "veth", "peer", "name", outside, "netns", this.#namespaces[0]!]);
    run(["netns", "exec", this.#namespaces[0]!, "ip", "link", "set", outside, "master", "br0", "up"]);
    run(["netns", "exec", namespace, "ip", "addr", "add", `${address}/24`, "dev", inside]);
    run(["netns", "exec", namespace, "ip", "link", "set", inside, "up"]);
    run(["netns", "exec", namespace, "ip", "link", "set", "lo", "up"]);
    return { namespace, address };
  }

  /** Start `command` inside `namespace` (its pid is the command's own: `ip netns exec` execs it). */
  spawn(namespace: string, command: string[], env: NodeJS.ProcessEnv): ChildProcess {
    const child = spawn("ip", ["netns", "exec", namespace, ...command], { env, stdio: ["ignore", "pipe", "pipe"] });
    this.#children.push(child);
    return child;
  }

  /** Kill what it started, then delete every namespace. */
  remove(): void {
    for (const child of this.#children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const namespace of this.#namespaces.reverse()) spawnSync("ip", ["netns", "del", namespace]);
  }

  #namespace(name: string): string {
    const namespace = `${this.#prefix}-${name}`;
    run(["netns", "add", namespace]);
    this.#namespaces.push(namespace);
    return namespace;
  }
}

function run(args: string[]): void {
  const result = spawnSync("ip", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`ip ${args.join(" ")} failed: ${result.stderr.trim()}`);
}

/** Collect a child's output as text. */
export function outputOf(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return { stdout: () => stdout, stderr: () => stderr };
}
