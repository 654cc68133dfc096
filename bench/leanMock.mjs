// The mock model server of the batch benches, as the source of a Node program to run in a process of its own (so
// that neither side's load slows the other). It answers every chat request with the same short answer after
// `answerAfterMs`, and keeps no record of the requests: a 100,000-item run must not grow the mock either. It prints
// its base URL on stdout once listening, and ends when its standard input closes: spawn it with stdin a pipe, so
// that it goes away with the bench however the bench ends (a crash, Ctrl-C, a closed pipe).
export function leanMockSource(answerAfterMs) {
  return `import { createServer } from "node:http";
const answer = JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion", created: 0, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "answer" }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => setTimeout(() => { response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) }); response.end(answer); }, ${Number(answerAfterMs)}));
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port + "/v1"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();`;
}
