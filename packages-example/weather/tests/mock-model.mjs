// A stand-in for an OpenAI-compatible model, to record the weather tests without a key or a network:
//   node packages-example/weather/tests/mock-model.mjs      (prints its base URL; Ctrl-C to stop)
// It answers from what it is sent (the cities the user names, the tools' results), like a tiny rule-based model,
// so that cases can be recorded in any order and at once.
import { pathToFileURL } from "node:url";
import { startMockOpenAIServer } from "lllm/testing";

const CITIES = ["Paris", "Tokyo", "London", "Oslo", "Rome"];

/** The text between a tool result's `---` lines (lllm's result format), else the whole text. */
const resultText = (content) => /\n---\n([\s\S]*)\n---$/.exec(content)?.[1] ?? content;

/** The answer to one chat request (a mock server's `handler`). */
export function answer(body) {
  const messages = body.messages ?? [];
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const asked = String(messages[lastUser]?.content ?? "");
  const results = messages.slice(lastUser + 1).filter((message) => message.role === "tool").map((message) => resultText(String(message.content)));
  if (results.length > 0) {
    if (/fahrenheit/i.test(asked)) return { text: `That is ${results.join(", ")} degrees Fahrenheit.` };
    return { text: results.map((result) => `${result}.`).join(" ") };
  }
  if (/fahrenheit/i.test(asked)) {
    // The temperature is in the assistant's earlier answer: "Sunny, 22 degrees celsius in Paris."
    const earlier = messages.slice(0, lastUser).filter((message) => message.role === "assistant").map((message) => String(message.content ?? "")).join(" ");
    const celsius = /(-?\d+(?:\.\d+)?) degrees celsius/i.exec(earlier);
    if (celsius) return { tool_calls: [{ name: "to_fahrenheit", arguments: { celsius: Number(celsius[1]) } }] };
  }
  const cities = CITIES.filter((city) => asked.includes(city));
  if (cities.length > 0) return { tool_calls: cities.map((city) => ({ name: "get_weather", arguments: { city } })) };
  return { text: "Which city would you like the weather for?" };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startMockOpenAIServer({ handler: answer });
  console.log(server.url);
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
