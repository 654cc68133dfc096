import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startCli, waitUntil, type RunningCli } from "./processTree.js";
import { tempTree } from "./tempTree.js";

/**
 * A package `pool` whose tactic `pool` has one tool, `hold`: it tells the test's hold server that it holds (with its
 * tag and its process id), then waits until the test releases it, and tells the server when its signal aborted it.
 * The tactic's model is at `baseUrl`. The worker must be given `HOLD_URL` (a `HoldServer`'s url) in its environment.
 */
export function poolPackage(baseUrl: string): string {
  return `${tempTree({
    "pool/lllm.yaml": "name: pool\nversion: 0.1.0\n",
    "pool/tools/hold.mjs":
      'export default { name: "hold", description: "Holds until released", parameters: { tag: { type: "string" } }, run: async ({ tag }, ctx) => {\n' +
      "  const base = process.env.HOLD_URL;\n" +
      "  await fetch(`${base}/held?tag=${encodeURIComponent(tag)}&pid=${process.pid}`);\n" +
      "  try {\n" +
      "    return await (await fetch(`${base}/wait`, { signal: ctx.signal })).text();\n" +
      "  } catch {\n" +
      "    await fetch(`${base}/aborted?tag=${encodeURIComponent(tag)}`).catch(() => {});\n" +
      '    return "aborted";\n' +
      "  }\n" +
      "} };\n",
    "pool/tactics/pool.yaml": `name: pool\ndescription: Holds, then answers.\npackages: [..]\nprompt: "{input}"\nagent_configs:\n  - name: holder\n    system_prompt: You hold.\n    model_name: gpt-test\n    invoker_config: {base_url: "${baseUrl}"}\n    tools: [hold]\n`,
  }, "lllm-pool-")}/pool`;
}

/** The test's side of `hold`: who holds (tag → pid), who was aborted, and the release of every hold. */
export interface HoldServer {
  url: string;
  held: Map<string, number>;
  aborted: Set<string>;
  /** Every hold, waiting and to come, returns `text` at once from now on. */
  release(text: string): void;
  close(): Promise<void>;
}

export async function startHoldServer(): Promise<HoldServer> {
  const held = new Map<string, number>();
  const aborted = new Set<string>();
  let released: string | undefined;
  const waiting: Array<(text: string) => void> = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname === "/held") held.set(url.searchParams.get("tag")!, Number(url.searchParams.get("pid")));
    else if (url.pathname === "/aborted") aborted.add(url.searchParams.get("tag")!);
    else if (url.pathname === "/wait") {
      if (released !== undefined) return void response.end(released);
      waiting.push((text) => response.end(text));
      return;
    }
    response.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    aborted,
    release(text) {
      released = text;
      for (const answer of waiting.splice(0)) answer(text);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Start `lllm worker --queue URL -p PKG` and wait until it serves the pool's tactic (a server announced it). */
export async function startPoolWorker(queue: string, pkg: string, env: NodeJS.ProcessEnv, concurrency = 4, args: string[] = []): Promise<RunningCli> {
  const worker = startCli(["worker", "--queue", queue, "-p", pkg, "--concurrency", String(concurrency), ...args], { env });
  if (!(await waitUntil(() => worker.stderr().includes("lllm worker: serving pool"), 60_000))) {
    worker.killTree();
    throw new Error(`the worker never joined the served tactic; stderr:\n${worker.stderr()}`);
  }
  return worker;
}
