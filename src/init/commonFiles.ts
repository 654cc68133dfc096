/**
 * The files every template of `lllm init` shares: the manifest, a TypeScript tool with zod parameters, a command
 * tool (any language; here Node, which every lllm user has), a tsconfig that type-checks the tools against lllm's
 * types (found in `node_modules/lllm`, as any package's: no path of this machine in a file that is shared), and a
 * README.
 */

export interface TemplateContext {
  /** The package's name (from the folder's name, made an identifier). */
  name: string;
}

/** The major version of TypeScript lllm's own types are checked with: what the README's `npx` pins. */
export const TYPESCRIPT_MAJOR = 5;

/** A test case's input and the answer its cassette replays: one place, so the test, cassette and script agree. */
export const DEMO_TEXT = "the quick brown fox";

export function manifest(context: TemplateContext, description: string): string {
  return `# A package is a plain folder: this manifest, and tools/, prompts/, tactics/, proxies/ (each optional).
[package]
name = "${context.name}"
version = "0.1.0"
description = "${description}"
`;
}

export const countWordsTool = `import { tool, z } from "lllm";

/** A tool in TypeScript: zod parameters give \`run\` typed arguments, and the model a JSON Schema. */
export default tool({
  name: "count_words",
  description: "Count the words of a text",
  parameters: z.object({ text: z.string().describe("The text to count the words of") }),
  run: ({ text }) => text.split(/\\s+/).filter((word) => word !== "").length,
});
`;

export const shoutTool = `# A command tool: any program. The arguments arrive as JSON on standard input; what it prints is the result.
name: shout
description: Write a text in capital letters
command: [node, ../scripts/shout.mjs]
timeout: 10
parameters:
  text:
    type: string
    description: The text to shout
`;

export const shoutScript = `// The program behind tools/shout.yaml: reads the arguments (JSON) from standard input, prints the result.
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { text } = JSON.parse(input);
  process.stdout.write(String(text).toUpperCase());
});
`;

// No \`paths\`: \`import … from "lllm"\` finds node_modules/lllm, as for any package, wherever the folder is checked out.
export const tsconfig = `${JSON.stringify(
  {
    compilerOptions: {
      strict: true,
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      noEmit: true,
      skipLibCheck: true,
    },
    include: ["tools", "proxies", "tactics"],
  },
  null,
  2,
)}\n`;

/** Written only where there is none: \`node_modules/lllm\` is a link to this machine's lllm, not for the repository. */
export const gitignore = "node_modules/\n";

export function readme(context: TemplateContext, options: { tactic: string; what: string; needs?: string }): string {
  const ref = `${context.name}.tactics:${options.tactic}`;
  return `# ${context.name}

${options.what}

\`\`\`sh
lllm validate tactics/${options.tactic}.yaml                                   # load and bind everything
lllm run tactics/${options.tactic}.yaml --model scripted:scripted/demo.yaml -i "Count: ${DEMO_TEXT}"   # offline, no key
lllm test tests --offline                                             # the test, replayed from its cassette
lllm run ${ref} -p . -i "How many words are in 'a b c'?"          # a real model (OPENAI_API_KEY, or lllm keys set openai)
npx --yes -p typescript@${TYPESCRIPT_MAJOR} tsc -p .                                     # type-check the tools against lllm's types
\`\`\`
${options.needs ? `\n${options.needs}\n` : ""}
\`tsc\` finds lllm's types in \`node_modules/lllm\`: \`lllm init\` made it a link to the lllm that made this package. In
another checkout (a teammate's, CI) make it once: \`npm link lllm\` (when lllm was installed with \`npm link\` or
\`npm install -g\`), or \`npm i -D /path/to/lllm\`. It is kept out of git (\`.gitignore\`).

Edit \`tools/\`, \`prompts/\` and \`tactics/\`; after a change of behaviour, record the test again with a real model:
\`lllm test tests --update\`.
`;
}

/** A cassette of \`lllm test\`: the model's turns of one case, by agent (the format \`lllm test --record\` writes). */
export function cassette(options: { tactic: string; testFile: string; caseName: string; agent: string; turns: string }): string {
  return `# The model's turns of case "${options.caseName}" of ${options.testFile}, by agent, as \`lllm test --record\` writes them.
# \`lllm test\` replays them (no key, no network; the tools run for real); \`lllm test --update\` records them again.
# It is a \`scripted:\` model file too: lllm run TACTIC --model scripted:THIS_FILE --input ...
tactic: ${options.tactic}
test: ${options.testFile}
case: ${options.caseName}
agents:
  ${options.agent}:
${options.turns}`;
}
