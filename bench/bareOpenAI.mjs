#!/usr/bin/env node
// The baseline of the tool-round bench: the same tool loop as `lllm run bench/fixtures/rounds.yaml`, written
// directly against the `openai` SDK, as a user would without lllm. Usage: node bench/bareOpenAI.mjs <model> <input>
// with OPENAI_BASE_URL and OPENAI_API_KEY set (the mock server of lllm/testing).
import OpenAI from "openai";

const [model = "bench-1", input = "Weather?"] = process.argv.slice(2);
const client = new OpenAI();
const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather for a city",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string", description: "The city name, e.g. 'Paris'" },
          unit: { type: "string", description: "Temperature unit: 'celsius' or 'fahrenheit'", default: "celsius" },
        },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
];
const getWeather = ({ city, unit = "celsius" }) => `Sunny, 22 degrees ${unit} in ${city}`;

const messages = [
  { role: "system", content: "You answer weather questions." },
  { role: "user", content: input },
];
for (;;) {
  const completion = await client.chat.completions.create({ model, messages, tools });
  const message = completion.choices[0].message;
  messages.push(message);
  if (!message.tool_calls?.length) {
    process.stdout.write(`${message.content}\n`);
    break;
  }
  for (const call of message.tool_calls) {
    const content = call.function.name === "get_weather" ? getWeather(JSON.parse(call.function.arguments)) : `unknown tool ${call.function.name}`;
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
}
