import { tool } from "lllm";

export const toFahrenheit = tool({
  name: "to_fahrenheit",
  description: "Convert a temperature from Celsius to Fahrenheit",
  parameters: { celsius: { type: "number" } },
  run: ({ celsius }) => (Number(celsius) * 9) / 5 + 32,
});
