import { tool } from "lllm";

export default tool({
  name: "web_search",
  description: "Search the web for information",
  parameters: { query: { type: "string" } },
  run: ({ query }) => `Top results for '${String(query)}'`, // call your search API here
});
