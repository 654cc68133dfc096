import { proxy } from "lllm";

/**
 * The seed's Step 11 proxy: no base URL, so each endpoint's `handle` computes the answer itself. The agent calls
 * CALL_API("weather/current/Tokyo", {}) or CALL_API("weather/forecast/daily", {"city": "Tokyo", "days": 2}).
 */
export default proxy({
  path: "weather",
  name: "Weather API",
  description: "Current weather and forecasts for any city.",
  endpoints: [
    {
      category: "current",
      endpoint: "current/{city}",
      description: "Current temperature and conditions for a city.",
      params: {
        "city*": ["string", "London"], // * marks a required parameter
        units: ["string", "celsius"],
      },
      response: { temperature: 18, condition: "cloudy" },
      handle: (params) => ({ city: params.city, temperature: 18, condition: "cloudy" }),
    },
    {
      category: "forecast",
      endpoint: "forecast/daily",
      description: "Daily forecast for a city.",
      params: {
        "city*": ["string", "London"],
        days: ["integer", 5],
      },
      response: [{ day: 1, high: 20, low: 12 }],
      handle: (params) => {
        const days = Number(params.days ?? 5);
        return Array.from({ length: days }, (_, index) => ({ day: index + 1, high: 18 + index, low: 10 + index }));
      },
    },
  ],
});
