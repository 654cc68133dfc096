import { serve, type LllmServer, type ServeOptions } from "../../src/serve/serve.js";
import { startCli, waitUntil, type RunningCli } from "./processTree.js";
import { tempTree } from "./tempTree.js";

/** `serve()` listening on a free loopback port: its base URL (`http://127.0.0.1:PORT`) and the server to stop. */
export interface ServingLibrary {
  server: LllmServer;
  url: string;
}

/** Serve tactics in this process with the library's `serve()`, on a free port. Stop it with `server.stop()`. */
export async function serveInProcess(options: ServeOptions): Promise<ServingLibrary> {
  const server = await serve({ warn: () => {}, ...options });
  const url = await server.listen(0);
  return { server, url };
}

/**
 * A package folder `shop` with a tool `lookup_price` (returns `<item>: 3 EUR`), a tool `slow_wait` that waits until
 * its signal aborts (and says so in `aborted.txt`), and a tactic `shop` whose agent uses them on a model at
 * `baseUrl`; `extraTactics` adds more tactic files (name → YAML). Returns the package folder.
 */
export function shopPackage(baseUrl: string, extraTactics: Record<string, string> = {}): string {
  return tempTree({
    "shop/lllm.yaml": "name: shop\nversion: 0.1.0\n",
    "shop/tools/lookup_price.mjs": 'export default { name: "lookup_price", description: "The price of an item", parameters: { item: { type: "string" } }, run: ({ item }) => `${item}: 3 EUR` };\n',
    "shop/tools/slow_wait.mjs":
      'import { writeFileSync } from "node:fs";\nimport path from "node:path";\nimport { fileURLToPath } from "node:url";\nconst here = path.dirname(fileURLToPath(import.meta.url));\nexport default { name: "slow_wait", description: "Waits", parameters: {}, run: (_args, ctx) => new Promise((resolve) => { writeFileSync(path.join(here, "started.txt"), "yes"); ctx.signal?.addEventListener("abort", () => { writeFileSync(path.join(here, "aborted.txt"), "yes"); resolve("aborted"); }); }) };\n',
    "shop/tactics/shop.yaml": `name: shop\ndescription: Answers questions about prices.\npackages: [..]\nprompt: "{input}"\nagent_configs:\n  - name: clerk\n    system_prompt: You are a shop clerk.\n    model_name: gpt-test\n    invoker_config: {base_url: \"${baseUrl}\"}\n    tools: [lookup_price, slow_wait]\n`,
    ...Object.fromEntries(Object.entries(extraTactics).map(([name, yaml]) => [`shop/tactics/${name}.yaml`, yaml])),
  }, "lllm-serve-") + "/shop";
}

/** A running `lllm serve` CLI: its base URL and the token it made (without --token-env or --no-auth). */
export interface ServingCli {
  cli: RunningCli;
  url: string;
  token?: string;
}

/**
 * Start `lllm serve <targets> --http 127.0.0.1:0 [...args]` and wait for the line that names its address (and the
 * one with the token it made, when it makes one). Throws with the CLI's stderr when it exits or prints none.
 */
export async function startServeCli(targets: string[], options: { args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ServingCli> {
  const cli = startCli(["serve", ...targets, "--http", "127.0.0.1:0", ...(options.args ?? [])], { ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}) });
  let exited = false;
  void cli.exit(10 * 60_000).then((code) => (exited = code !== "still running"));
  const address = (): string | undefined => / at (http:\/\/\S+?)\/v1/.exec(cli.stderr())?.[1];
  const made = (): string | undefined => /Authorization: Bearer ([\w-]+)`/.exec(cli.stderr())?.[1];
  const makesToken = !(options.args ?? []).some((arg) => arg === "--token-env" || arg === "--no-auth");
  await waitUntil(() => (address() !== undefined && (!makesToken || made() !== undefined)) || exited, 60_000);
  const url = address();
  if (!url) {
    cli.killTree();
    throw new Error(`lllm serve printed no address; stderr:\n${cli.stderr()}`);
  }
  const token = made();
  return { cli, url, ...(token !== undefined ? { token } : {}) };
}
