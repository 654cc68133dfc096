// The floor of a server of runs, for bench/serve.js: node:http, the request's JSON, `runRecorded` of the tactic, a
// chat.completion answer, and nothing else (no token, no checks of the request, no limits, no records of the route,
// no cancellation, no metrics). What `lllm serve` does beyond this is its own cost; what this costs against the runs
// in-process is what any server in Node pays. Usage: node bench/serveFloor.mjs ROOT TACTIC (prints its address).
import { createServer } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [root, tactic] = process.argv.slice(2);
const { prepareTactic } = await import(pathToFileURL(path.join(root, "dist/tactics/prepareTactic.js")).href);
const { runRecorded } = await import(pathToFileURL(path.join(root, "dist/run/runRecorded.js")).href);
const prepared = await prepareTactic(tactic, { model: "gpt-4o-mini" });

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", async () => {
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const run = await runRecorded(prepared, { input: body.messages.at(-1).content, warn: () => {} });
    const content = run.ok ? run.result.text : String(run.error);
    const text = JSON.stringify({ id: "chatcmpl-floor", object: "chat.completion", created: Math.floor(Date.now() / 1000), model: body.model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: run.usage.promptTokens, completion_tokens: run.usage.completionTokens, total_tokens: run.usage.totalTokens } });
    response.writeHead(run.ok ? 200 : 500, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    response.end(text);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`floor server at http://127.0.0.1:${server.address().port}/v1`));
process.on("SIGTERM", () => process.exit(0));
