import { tactic } from "lllm";

/**
 * A tactic written in code (LLLM's Tactic subclass, in TypeScript form). Each call gets fresh agents built from
 * `config` (or from the YAML tactic that runs it). Other tactics use it as a tool with `weather.tactics:briefing`
 * (its input's fields become the tool's parameters: parameterMode kwargs), or pick its `headline` tool with
 * `weather.tactics:briefing#headline`. Run it on its own with `lllm run weather.tactics:briefing`.
 */
export default tactic({
  name: "briefing",
  description: "Write a short weather briefing for a city.",
  agentGroup: ["reporter"],
  input: {
    type: "object",
    properties: {
      city: { type: "string", description: "The city" },
      style: { type: "string", description: "plain or cheerful", default: "plain" },
    },
    required: ["city"],
  },
  parameterMode: "kwargs",
  config: {
    global: { model_name: "gpt-4o-mini", tools: ["get_weather"] },
    agent_configs: [{ name: "reporter", system_prompt: "You write short weather briefings. Look the weather up first." }],
  },
  call: async (input, { agents, signal }) => {
    const { city, style } = (typeof input === "string" ? JSON.parse(input) : input) as { city: string; style?: string };
    const reporter = agents.reporter!;
    reporter.open("briefing");
    reporter.receive(`Write a ${style ?? "plain"} weather briefing for ${city} in two sentences.`);
    return (await reporter.respond(signal ? { signal } : {})).content;
  },
  tools: {
    headline: {
      description: "A one-line weather headline for a city",
      parameters: { city: { type: "string", description: "The city" } },
      run: async ({ city }, { agents }) => {
        const reporter = agents.reporter!;
        reporter.open("headline");
        reporter.receive(`Write a one-line weather headline for ${String(city)}.`);
        return (await reporter.respond()).content;
      },
    },
  },
});
