import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./freePort.js";

/** Whether `redis-server` is installed (CI installs it; a local run without it skips, and CI=true never does). */
export const hasRedis = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

/** A private redis-server on 127.0.0.1, without persistence (a restart empties it), with a password if given. */
export class RedisServer {
  #child: ChildProcess | undefined;
  readonly #clients: Redis[] = [];

  private constructor(
    readonly port: number,
    readonly password: string | undefined,
  ) {}

  /** The URL lllm is given (with the password, when there is one). */
  get url(): string {
    return `redis://${this.password !== undefined ? `:${this.password}@` : ""}127.0.0.1:${this.port}`;
  }

  static async start(options: { port?: number; password?: string } = {}): Promise<RedisServer> {
    const server = new RedisServer(options.port ?? (await freePort()), options.password);
    await server.restart();
    return server;
  }

  /** Start (again, on the same port). Resolves when it accepts connections. */
  async restart(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...(this.password !== undefined ? ["--requirepass", this.password] : [])];
    const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
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

  /** A client of the test's own, to look at (or write) keys; closed by `stop`. */
  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on("error", () => undefined);
    this.#clients.push(client);
    return client;
  }

  /** Stop it and wait until it has exited. */
  async stop(): Promise<void> {
    for (const client of this.#clients.splice(0)) client.disconnect();
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }
}
