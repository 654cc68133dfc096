#!/usr/bin/env node
// The floor of the batch bench: the same model calls as `lllm batch` makes, as a bare loop over the `openai` SDK
// with a p-limit-style limiter (inline: a dozen lines, not a dependency), as a user would write without lllm.
// Usage: node bench/batchFloor.mjs <items> <concurrency> with OPENAI_BASE_URL and OPENAI_API_KEY set.
import OpenAI from "openai";

const [items = "1000", concurrency = "32"] = process.argv.slice(2);
const client = new OpenAI({ maxRetries: 4 });
const limit = Number(concurrency);
let next = 0;
async function lane() {
  while (next < Number(items)) {
    const index = next++;
    const reply = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "system", content: "Answer." }, { role: "user", content: `q${index + 1}` }] });
    process.stdout.write(`${JSON.stringify({ id: String(index + 1), output: reply.choices[0].message.content })}\n`);
  }
}
await Promise.all(Array.from({ length: limit }, lane));
