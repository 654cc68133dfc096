import { tool } from "lllm";

/** A processor replaces the default "Return of calling function …" text. */
export const weatherBrief = tool({
  name: "weather_brief",
  description: "Get the current weather for a city",
  parameters: { city: { type: "string" } },
  run: ({ city }) => `Sunny in ${city}`,
  processor: (result, call) => `[${call.name}] ${String(result)}`,
});
