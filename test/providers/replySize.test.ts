import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, emptyHome, runCli } from "../helpers/runCli.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

/**
 * A model reply is read up to a size (`reply_size`, default 64 MB, counted after decoding): a body past it, a gzip
 * bomb above all, is a provider error, not a process that fills memory until V8 gives up.
 */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server that answers every POST with `members` gzip members of `member` decoded bytes each. */
async function serveGzip(member: Buffer, members: number): Promise<{ url: string; posts: () => number }> {
  const compressed = gzipSync(member);
  let posts = 0;
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.method === "POST") posts += 1;
      response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      let sent = 0;
      const write = (): void => {
        while (sent < members) {
          sent += 1;
          if (!response.write(compressed)) return void response.once("drain", write);
        }
        response.end();
      };
      response.on("error", () => undefined);
      write();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts: () => posts };
}

function runNode(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome() }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const providers = [
  { model: "gpt-4o-mini", env: (url: string) => ({ OPENAI_API_KEY: "sk-openai-key-0000000001", OPENAI_BASE_URL: `${url}/v1` }) },
  { model: "anthropic/claude-haiku-4-5", env: (url: string) => ({ ANTHROPIC_API_KEY: "sk-ant-key-000000000002", ANTHROPIC_BASE_URL: url }) },
  { model: "gemini/gemini-2.5-flash", env: (url: string) => ({ GEMINI_API_KEY: "gemini-key-00000000003", GEMINI_BASE_URL: url }) },
];

describe("the reply size cap", () => {
  it("a reply past the project's reply_size is a provider_reply_too_large, not retried, for every provider", async () => {
    const project = tempTree({ ".lllmrc.yaml": "reply_size: 1M\n" });
    // 4 MB of answer text once inflated.
    const { url, posts } = await serveGzip(Buffer.from(`{"choices": [{"message": {"content": "${"x".repeat(4 * 1024 * 1024)}"}}]}`), 1);
    let expected = 0;
    for (const provider of providers) {
      for (const stream of ["--no-stream", "--stream"]) {
        const result = await runCli(["run", loop, "--model", provider.model, "--input", "Weather?", "--json", stream], { cwd: project, env: { ...provider.env(url), LLLM_RETRY_DELAY_MS: "1" }, timeoutMs: 60_000 });
        expected += 1;
        expect(result.code, `${provider.model} ${stream}: ${result.stderr}`).toBe(1);
        const report = JSON.parse(result.stdout) as { error: { code: string; message: string; hint: string } };
        expect(report.error.code).toBe("provider_reply_too_large");
        expect(report.error.message).toContain("is larger than 1 MB; stopped reading it");
        expect(report.error.hint).toContain("reply_size");
        expect(posts()).toBe(expected);
      }
    }
  }, 300_000);

  it("a bad reply_size is a configuration error that names the settings file", async () => {
    const project = tempTree({ ".lllmrc.yaml": "reply_size: lots\n" });
    const result = await runCli(["validate", loop], { cwd: project });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(".lllmrc.yaml");
    expect(result.stderr).toContain("reply_size");
  });

  it("a 1 GB gzip bomb stops at the default cap, and the process's memory stays far below the bomb", async () => {
    // 64 members of 16 MB of spaces: about 1 MB on the wire, 1 GB inflated.
    const { url } = await serveGzip(Buffer.alloc(16 * 1024 * 1024, 0x20), 64);
    const project = tempDir("lllm-bomb-");
    mkdirSync(path.join(project, "node_modules"));
    symlinkSync(ROOT, path.join(project, "node_modules", "lllm"), "dir");
    writeFileSync(
      path.join(project, "bomb.mjs"),
      [
        'import { createModel } from "lllm";',
        `const model = createModel({ model: "gpt-4o-mini", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "${url}/v1" }, retry: { maxRetries: 0 } });`,
        "const error = await model.generate({ messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (caught) => caught);",
        "console.log(JSON.stringify({ code: error?.code, message: error?.message, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));",
      ].join("\n"),
    );
    // Spawned, not spawnSync: the server answers from this process.
    const result = await runNode(["bomb.mjs"], project);
    expect(result.stderr).toBe("");
    const outcome = JSON.parse(result.stdout) as { code: string; message: string; maxRssBytes: number };
    expect(outcome.code).toBe("provider_reply_too_large");
    expect(outcome.message).toContain("is larger than 64 MB; stopped reading it");
    // The cap (64 MB) read as bytes and then as text, plus Node itself; the whole bomb would be gigabytes.
    expect(outcome.maxRssBytes).toBeLessThan(512 * 1024 * 1024);
  }, 180_000);
});
