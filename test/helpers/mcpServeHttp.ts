import { startCli, waitUntil, type RunningCli } from "./processTree.js";

/** `lllm mcp serve DIR --http 127.0.0.1:0` running, and the endpoint it printed. */
export interface ServingCli {
  cli: RunningCli;
  /** e.g. `http://127.0.0.1:41234/mcp` */
  url: string;
}

/**
 * Start `lllm mcp serve <dir> --http 127.0.0.1:0 [...args]` (a free port picked by the OS) and wait for the line
 * that names its endpoint. Throws with the CLI's stderr when it exits or prints no endpoint.
 */
export async function startMcpServeHttp(dir: string, options: { args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ServingCli> {
  const cli = startCli(["mcp", "serve", dir, "--http", "127.0.0.1:0", ...(options.args ?? [])], { ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}) });
  let exited = false;
  void cli.exit(10 * 60_000).then((code) => (exited = code !== "still running"));
  const endpoint = (): string | undefined => /serving .* at (http:\/\/\S+\/mcp)/.exec(cli.stderr())?.[1];
  await waitUntil(() => endpoint() !== undefined || exited, 60_000);
  const url = endpoint();
  if (!url) {
    cli.killTree();
    throw new Error(`lllm mcp serve ${dir} --http printed no endpoint; stderr:\n${cli.stderr()}`);
  }
  return { cli, url };
}
