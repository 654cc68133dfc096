import { startCli, waitUntil, type RunningCli } from "./processTree.js";

/** `lllm mcp serve DIR --http 127.0.0.1:0` running, and the endpoint it printed. */
export interface ServingCli {
  cli: RunningCli;
  /** e.g. `http://127.0.0.1:41234/mcp` */
  url: string;
  /** The token the CLI made and printed (without `--token-env` or `--no-auth`). */
  token?: string;
}

/**
 * Start `lllm mcp serve <dir> --http 127.0.0.1:0 [...args]` (a free port picked by the OS) and wait for the line
 * that names its endpoint (and the line with the token it made, when it makes one). Throws with the CLI's stderr
 * when it exits or prints no endpoint. Without `--token-env` or `--no-auth` in `args` the CLI requires a token of
 * its own making.
 */
export async function startMcpServeHttp(dir: string, options: { args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ServingCli> {
  const cli = startCli(["mcp", "serve", dir, "--http", "127.0.0.1:0", ...(options.args ?? [])], { ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}) });
  let exited = false;
  void cli.exit(10 * 60_000).then((code) => (exited = code !== "still running"));
  const endpoint = (): string | undefined => /serving .* at (http:\/\/\S+\/mcp)/.exec(cli.stderr())?.[1];
  const made = (): string | undefined => /Authorization: Bearer ([\w-]+)`/.exec(cli.stderr())?.[1];
  const makesToken = !(options.args ?? []).some((arg) => arg === "--token-env" || arg === "--no-auth");
  await waitUntil(() => (endpoint() !== undefined && (!makesToken || made() !== undefined)) || exited, 60_000);
  const url = endpoint();
  if (!url) {
    cli.killTree();
    throw new Error(`lllm mcp serve ${dir} --http printed no endpoint; stderr:\n${cli.stderr()}`);
  }
  const token = made();
  return { cli, url, ...(token !== undefined ? { token } : {}) };
}
