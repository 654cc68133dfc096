import { cassette, countWordsTool, DEMO_TEXT, manifest, readme, shoutScript, shoutTool, tsconfig, type TemplateContext } from "./commonFiles.js";

/** The templates of `lllm init --template NAME`. */
export const TEMPLATES = ["agent", "code-action", "proxy"] as const;
export type TemplateName = (typeof TEMPLATES)[number];

/** The files of a template (relative path → text). Each works at once: validate, run offline, test replay. */
export function templateFiles(template: TemplateName, context: TemplateContext): Record<string, string> {
  if (template === "code-action") return codeActionFiles(context);
  if (template === "proxy") return proxyFiles(context);
  return agentFiles(context);
}

/** Files every template has: the tools (a TypeScript one, a command one) and the tsconfig. */
function toolFiles(): Record<string, string> {
  return { "tools/count_words.ts": countWordsTool, "tools/shout.yaml": shoutTool, "scripts/shout.mjs": shoutScript, "tsconfig.json": tsconfig };
}

/** A test file with one case, and its cassette: the same turns as the `scripted:` demo. */
function testFiles(options: { tactic: string; agent: string; input: string; asserts: string; turns: string }): Record<string, string> {
  const testFile = `${options.tactic}.test.yaml`;
  const caseName = "counts words";
  const indented = options.turns.replace(/^(?=.)/gm, "    ");
  return {
    [`tests/${testFile}`]: `# \`lllm test tests\` replays each case from its cassette (__cassettes__/): no key, no network, the tools running
# for real. \`lllm test tests --record\` records the cases that have none with a real model.
tactic: ../tactics/${options.tactic}.yaml
cases:
  - name: ${caseName}
    input: "${options.input}"
    assert:
${options.asserts.replace(/^(?=.)/gm, "      ")}`,
    [`tests/__cassettes__/${testFile}/counts-words.yaml`]: cassette({ tactic: options.tactic, testFile, caseName, agent: options.agent, turns: indented }),
  };
}

function agentFiles(context: TemplateContext): Record<string, string> {
  const turns = `- tool_calls:
    - {name: count_words, arguments: {text: ${DEMO_TEXT}}}
    - {name: shout, arguments: {text: 4 words}}
- text: "The text has 4 words: 4 WORDS!"
`;
  return {
    "lllm.toml": manifest(context, "An agent with a TypeScript tool and a command tool."),
    ...toolFiles(),
    "prompts/system.md": "You are a helpful assistant. Count words with count_words, and shout the count with shout. Answer in one sentence.\n",
    "tactics/assistant.yaml": `# An agent: the model calls the tools in a loop until it answers.
name: assistant
description: Count the words of a text, and shout the count.
packages: [..]
tactic_type: agent
prompt: "{input}"
global:
  model_name: gpt-4o-mini
  tools: [count_words, shout]
agent_configs:
  - name: assistant
    system_prompt_path: ${context.name}.prompts:system
    max_interrupt_steps: 5
`,
    "scripted/demo.yaml": `# The model's turns for \`--model scripted:scripted/demo.yaml\`: replayed in order, so the tactic runs offline with no
# key. A turn is text, or tool calls (run for real by lllm), as a real model would send.
${turns}`,
    ...testFiles({ tactic: "assistant", agent: "assistant", input: `Count: ${DEMO_TEXT}`, turns, asserts: `- contains: 4 WORDS\n- tool-called: {name: count_words, args: {text: ${DEMO_TEXT}}}\n- tool-called: shout\n` }),
    "README.md": readme(context, { tactic: "assistant", what: "An lllm package: an agent (`tactics/assistant.yaml`) with a TypeScript tool (`tools/count_words.ts`) and a command tool (`tools/shout.yaml`)." }),
  };
}

function codeActionFiles(context: TemplateContext): Record<string, string> {
  const turns = `- text: |
    \`\`\`python
    words = count_words(text="${DEMO_TEXT}")
    final_answer(shout(text=f"{words} words"))
    \`\`\`
`;
  return {
    "lllm.toml": manifest(context, "A code-action tactic: one Python program over the tools."),
    ...toolFiles(),
    "prompts/system.md": "You answer questions about texts with the tools.\n",
    "tactics/counter.yaml": `# Code-action: in one turn the model writes one Python program over the tools; it runs in a sandbox (bubblewrap or
# gVisor) and what it passes to final_answer(...) is the answer.
name: counter
description: Count words with one program over the tools.
packages: [..]
tactic_type: code-action
code_action: {exec_timeout: 60, max_repairs: 1, max_tool_calls: 20}
global:
  model_name: gpt-4o-mini
  tools: [count_words, shout]
agent_configs:
  - name: counter
    system_prompt_path: ${context.name}.prompts:system
`,
    "scripted/demo.yaml": `# The model's one turn for \`--model scripted:scripted/demo.yaml\`: the program runs for real, in the sandbox, and
# calls the tools through the bridge.
${turns}`,
    ...testFiles({ tactic: "counter", agent: "counter", input: `Count: ${DEMO_TEXT}`, turns, asserts: "- equals: 4 WORDS\n- not-contains: Error\n" }),
    "README.md": readme(context, {
      tactic: "counter",
      what: "An lllm package: a code-action tactic (`tactics/counter.yaml`): the model writes one Python program over the tools (`tools/count_words.ts`, `tools/shout.yaml`).",
      needs: "Programs run in a sandbox: python3 and bubblewrap or gVisor (`lllm doctor tactics/counter.yaml` checks).",
    }),
  };
}

function proxyFiles(context: TemplateContext): Record<string, string> {
  const turns = `- tool_calls:
    - {name: query_api_doc, arguments: {proxy_name: words}}
- tool_calls:
    - name: run_python
      arguments:
        code: |
          result = CALL_API("words/count", {"text": "${DEMO_TEXT}"})
          print(result["words"])
- text: The text has 4 words.
`;
  return {
    "lllm.toml": manifest(context, "A data-API proxy used from Python by an agent."),
    ...toolFiles(),
    "proxies/words.ts": `import { proxy } from "lllm";

/**
 * A proxy with no base URL: each endpoint's \`handle\` computes the answer (so the package works offline). The
 * agent reads its documentation with query_api_doc and calls it from Python: CALL_API("words/count", {...}).
 */
export default proxy({
  path: "words",
  name: "Words API",
  description: "Facts about texts.",
  endpoints: [
    {
      category: "count",
      endpoint: "count",
      description: "Count the words of a text.",
      params: { "text*": ["string", "the quick brown fox"] }, // * marks a required parameter
      response: { words: 4 },
      handle: (params) => ({ words: String(params.text).split(/\\s+/).filter((word) => word !== "").length }),
    },
  ],
});
`,
    "proxies/dictionary_api.yaml": `# A declarative HTTP proxy: CALL_API("dictionary/define/word", {}) sends
#   GET https://api.example.com/dictionary/define/word?key=$DICTIONARY_API_KEY
# The key is added on the host (\`lllm keys set DICTIONARY_API_KEY\`): code in the sandbox never sees it. Point it at
# your API (base_url), and add it to the tactic's activate_proxies.
path: dictionary
name: Dictionary API
description: Definitions of words.
base_url: https://api.example.com/dictionary
api_key_name: key
api_key_env: DICTIONARY_API_KEY
endpoints:
  - category: define
    endpoint: define/{word}
    description: The definitions of a word.
    params:
      word*: [string, fox]
    response: {word: fox, definitions: [a carnivorous mammal]}
`,
    "prompts/system.md": "You answer questions about texts. Read the API's documentation with query_api_doc, then call it from Python with run_python.\n",
    "tactics/analyst.yaml": `# An agent with a proxy: it reads the API's documentation (query_api_doc) and calls it from Python (run_python,
# in a sandbox) with CALL_API(path, params).
name: analyst
description: Answer questions about texts through the words API.
packages: [..]
tactic_type: agent
prompt: "{input}"
global:
  model_name: gpt-4o-mini
agent_configs:
  - name: analyst
    system_prompt_path: ${context.name}.prompts:system
    proxy: {activate_proxies: [words], exec_env: interpreter}
    max_interrupt_steps: 5
`,
    "scripted/demo.yaml": `# The model's turns for \`--model scripted:scripted/demo.yaml\`: the documentation, a Python cell calling the proxy
# (run for real, in the sandbox), the answer.
${turns}`,
    ...testFiles({ tactic: "analyst", agent: "analyst", input: `Count: ${DEMO_TEXT}`, turns, asserts: "- contains: 4 words\n- tool-called: run_python\n" }),
    "README.md": readme(context, {
      tactic: "analyst",
      what: "An lllm package: an agent (`tactics/analyst.yaml`) that reads a data API's documentation and calls it from Python; the API is a proxy (`proxies/words.ts`, computed here; `proxies/dictionary_api.yaml` shows an HTTP one with a key).",
      needs: "run_python runs in a sandbox: python3 and bubblewrap or gVisor (`lllm doctor tactics/analyst.yaml` checks).",
    }),
  };
}
