import { tool } from "lllm";

/** The seed's first tool: a JSON-Schema properties map; `unit` has a default, so only `city` is required. */
export default tool({
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    city: { type: "string", description: "The city name, e.g. 'Paris'" },
    unit: { type: "string", description: "Temperature unit: 'celsius' or 'fahrenheit'", default: "celsius" },
  },
  // Replace with a real weather API call.
  run: ({ city, unit }) => `Sunny, 22 degrees ${unit} in ${city}`,
});
