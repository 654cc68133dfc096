import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "../helpers/freePort.js";

/** Whether `redis-server` is installed (CI installs it; a local run without it skips, and CI=true never does). */
export const hasRedis = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

/** A private redis-server on 127.0.0.1, without persistence (a restart empties it). */
export class RedisServer {
  #child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()));
    await server.restart();
    return server;
  }

  /** Start (again, on the same port). Resolves when it accepts connections. */
  async restart(): Promise<void> {
    const child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    await new Promise<void>((resolve, reject) => {
      let text = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes("Ready to accept connections")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${text}`)));
    });
  }

  /** Stop it and wait until it has exited. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }
}
