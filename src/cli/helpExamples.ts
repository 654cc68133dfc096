import type * as Commander from "commander";

type Command = Commander.Command;

/**
 * Two or three real examples for every command's `--help`, by the command's path (`tools list`). They run from a
 * clone of lllm (the files they name are shipped in `packages-example/`); `test/cli/help.test.ts` checks that every
 * command has some and that the files they name exist.
 */
export const HELP_EXAMPLES: Readonly<Record<string, ReadonlyArray<readonly [command: string, what: string]>>> = {
  "": [
    ["lllm run packages-example/weather/tactics/weather.yaml --model scripted:packages-example/weather/scripted/paris-tokyo.yaml --input \"Weather in Paris and Tokyo?\"", "a first run, offline"],
    ["lllm chat packages-example/weather/tactics/weather.yaml --model gpt-4o-mini", "talk with a tactic's agent"],
    ["lllm help getting-started", "a first run, a first package, a first test (lllm help lists every topic)"],
  ],
  validate: [
    ["lllm validate packages-example/weather/tactics/weather.yaml", "check a tactic and bind its tools"],
    ["lllm validate packages-example/weather/tactics/analyst.yaml --json", "the same as JSON, for CI"],
  ],
  run: [
    ["lllm run packages-example/weather/tactics/weather.yaml --model scripted:packages-example/weather/scripted/paris-tokyo.yaml --input \"Weather in Paris and Tokyo?\"", "offline: the model's turns replayed from a file"],
    ["echo \"Weather in Oslo?\" | lllm run weather.tactics:weather -p packages-example/weather --model gpt-4o-mini --json", "a package ref, the input from a pipe, JSON out"],
    ["lllm run --continue --input \"And tomorrow?\"", "go on with the last run's dialog"],
  ],
  chat: [
    ["lllm chat packages-example/weather/tactics/weather.yaml --model gpt-4o-mini", "talk with the tactic's first agent"],
    ["lllm chat --model ollama/llama3", "a plain assistant on a local model"],
    ["printf 'Hi\\nWeather in Paris?\\n' | lllm chat packages-example/weather/tactics/weather.yaml", "a line a turn from a script; answers on stdout"],
  ],
  batch: [
    ["lllm batch packages-example/weather/tactics/weather.yaml --inputs questions.jsonl --out results.jsonl", "one result per line; run it again to resume"],
    ["seq 1 100 | lllm batch packages-example/weather/tactics/weather.yaml --inputs - --lines --concurrency 16 --max-cost 0.50", "text lines from a pipe, with a budget"],
  ],
  test: [
    ["lllm test packages-example/weather/tests --offline", "replay every case from its cassette; no key, no network"],
    ["lllm test packages-example/weather/tests --record", "run the cases without a cassette live and write theirs"],
    ["lllm test --junit results.xml --json", "every test file under this folder, for CI"],
  ],
  worker: [
    ["lllm worker --queue redis://127.0.0.1:6379 -p packages-example/weather", "run queued items with the weather package's tactics"],
    ["lllm worker --queue redis://:PASSWORD@queue-host:6379 --concurrency 8 -p ~/packages/textkit", "on a worker machine"],
  ],
  tools: [
    ["lllm tools list -p packages-example/weather", "the weather package's tools with their refs"],
    ["lllm tools call weather.tools:get_weather --args '{\"city\": \"Paris\"}' -p packages-example/weather", "call one"],
  ],
  "tools list": [
    ["lllm tools list -p packages-example/weather", "the weather package's tools with their refs"],
    ["lllm tools list -p packages-example/weather --json", "as JSON"],
  ],
  "tools show": [
    ["lllm tools show weather.tools:get_weather -p packages-example/weather", "the tool as the model sees it"],
    ["lllm tools show forecast -p packages-example/weather", "by its bare name"],
  ],
  "tools call": [
    ["lllm tools call weather.tools:get_weather --args '{\"city\": \"Paris\"}' -p packages-example/weather", "what the model would read back"],
    ["lllm tools call divide --args '{\"a\": 1, \"b\": 0}' -p packages-example/weather --json", "the raw result, or the failure, as JSON"],
  ],
  proxy: [
    ["lllm proxy list -p packages-example/weather", "the proxies that can be activated"],
    ["lllm proxy docs weather -p packages-example/weather", "exactly what query_api_doc returns"],
  ],
  "proxy list": [
    ["lllm proxy list -p packages-example/weather", "the proxies that can be activated"],
    ["lllm proxy list -p packages-example/weather --json", "as JSON"],
  ],
  "proxy docs": [
    ["lllm proxy docs weather -p packages-example/weather", "exactly what query_api_doc returns"],
    ["lllm proxy docs -p packages-example/weather --json", "every proxy's definitions as JSON"],
  ],
  "proxy call": [
    ["lllm proxy call weather/forecast/daily --params '{\"city\": \"Oslo\", \"days\": 2}' -p packages-example/weather", "one call, as CALL_API makes it"],
    ["lllm proxy call weather/current/Tokyo -p packages-example/weather --no-cache --json", "skip the response cache; JSON out"],
  ],
  exec: [
    ["echo 'print(CALL_API(\"weather/current/Tokyo\", {}))' | lllm exec --proxy weather -p packages-example/weather", "Python with a proxy, from a pipe"],
    ["lllm exec --file analysis.py --sandbox bwrap --timeout 120", "a file, in a bubblewrap sandbox"],
  ],
  mcp: [
    ["lllm mcp tools \"npx -y @modelcontextprotocol/server-everything\"", "list a stdio server's tools"],
    ["lllm mcp serve packages-example/weather", "serve a package over MCP"],
  ],
  "mcp tools": [
    ["lllm mcp tools \"npx -y @modelcontextprotocol/server-everything\"", "a stdio server, as a quoted command line"],
    ["lllm mcp tools https://example.com/mcp --bearer-token-env TOKEN --json", "a Streamable HTTP server whose token is in $TOKEN, as the model sees its tools"],
  ],
  "mcp serve": [
    ["lllm mcp serve packages-example/weather", "the weather package's tools and tactics over stdio"],
    ["lllm mcp serve packages-example/weather -p packages-example/search", "with another package loaded"],
  ],
  a2a: [
    ["lllm a2a card packages-example/weather", "the agent card lllm serve serves for the weather package"],
    ["lllm a2a card weather.yaml --url https://agents.example.com", "with the endpoint clients reach"],
  ],
  "a2a card": [
    ["lllm a2a card packages-example/weather", "a skill per tactic, the bearer scheme, streaming"],
    ["lllm a2a card packages-example/weather --url https://agents.example.com --no-auth", "behind a proxy, for a server without a token"],
  ],
  serve: [
    ["lllm serve packages-example/weather", "its tactics as models at http://127.0.0.1:8080/v1 and as an A2A agent at /a2a (a token is printed), its tools at /mcp"],
    ["LLLM_TOKEN=… lllm serve weather.yaml --http 0.0.0.0:8080 --token-env LLLM_TOKEN --max-cost 0.10", "beyond this machine, with a token and a ceiling per request"],
  ],
  logs: [
    ["lllm logs --since 1d --status error", "what failed today"],
    ["lllm logs show last", "the transcript of the last run"],
    ["lllm logs replay last -o tests/paris.yaml", "the last run as an offline test"],
  ],
  "logs show": [
    ["lllm logs show last", "the transcript of the last run"],
    ["lllm logs show 01J9 --json", "a run by the first characters of its id, as JSON"],
  ],
  "logs replay": [
    ["lllm logs replay last -o tests/paris.yaml", "the last run's model turns as a scripted model"],
    ["lllm run packages-example/weather/tactics/weather.yaml --model scripted:tests/paris.yaml --input \"Paris?\"", "then replay it offline, with the input that run had"],
  ],
  "logs serve": [
    ["lllm logs serve", "the run viewer on 127.0.0.1:8765 (open the address it prints)"],
    ["lllm logs serve --port 0", "on any free port"],
  ],
  "logs path": [
    ["lllm logs path", "where the run log is"],
    ["sqlite3 \"$(lllm logs path)\" 'select count(*) from runs'", "query it yourself"],
  ],
  "logs prune": [
    ["lllm logs prune --older-than 30d", "delete runs started more than 30 days ago"],
    ["lllm logs prune --older-than 1w", "more than a week ago"],
  ],
  models: [
    ["lllm models", "the provider prefixes, their key variables and the models lllm knows"],
    ["lllm models --json", "as JSON"],
  ],
  schema: [
    ["lllm schema tactic > tactic.schema.json", "for your editor's YAML extension"],
    ["lllm schema settings > lllmrc.schema.json", "the project settings' schema"],
  ],
  help: [
    ["lllm help tactics", "the page on tactic files, in the terminal"],
    ["lllm help run", "a command's help, like lllm run --help"],
  ],
  init: [
    ["lllm init my-agent", "a package that validates, runs offline and passes its test at once"],
    ["lllm init my-counter --template code-action", "one Python program over the tools"],
    ["lllm init . --template proxy --force", "into the current folder, though it is not empty"],
  ],
  keys: [
    ["lllm keys set openai", "store OPENAI_API_KEY (asked for without echo)"],
    ["lllm keys list", "the names stored, never the values"],
  ],
  "keys set": [
    ["lllm keys set OPENAI_API_KEY", "asked for without echo"],
    ["printf %s \"$KEY\" | lllm keys set WEATHER_API_KEY", "from standard input, in a script"],
  ],
  "keys list": [
    ["lllm keys list", "one name a line"],
    ["lllm keys list --json", "with whether the environment overrides each"],
  ],
  "keys get": [
    ["lllm keys get OPENAI_API_KEY", "the value, for scripts"],
    ["export OPENAI_API_KEY=\"$(lllm keys get openai)\"", "into another program's environment"],
  ],
  "keys remove": [
    ["lllm keys remove OPENAI_API_KEY", "forget a key"],
    ["lllm keys remove anthropic", "a provider's prefix stands for its variable"],
  ],
  "keys path": [
    ["lllm keys path", "where the keys are kept"],
    ["ls -l \"$(lllm keys path)\"", "check that only you can read it"],
  ],
  doctor: [
    ["lllm doctor", "what this machine has for lllm, and how to fix what is missing"],
    ["lllm doctor packages-example/weather/tactics/analyst.yaml", "what this tactic needs: keys, servers, Python, a sandbox (exit 1 if missing)"],
    ["lllm doctor --queue redis://127.0.0.1:6379 --json", "and a Redis, as JSON for CI"],
  ],
  completion: [
    ["source <(lllm completion bash)", "bash completion now (put it in ~/.bashrc)"],
    ["lllm completion fish > ~/.config/fish/completions/lllm.fish", "fish completion"],
  ],
  add: [
    ["lllm add npm:@acme/weather", "the newest version from npm (recorded as ^VERSION in lllm.toml, pinned in lllm.lock)"],
    ["lllm add git+https://github.com/acme/agents.git#v1.0.0:packages/search --as search", "a tag of a git repository, a sub-folder of it, under another name"],
    ["lllm add oci://ghcr.io/acme/weather:1.0.0 --trust", "an OCI artifact, its code trusted without a question (a script)"],
  ],
  install: [
    ["lllm install", "fetch what lllm.lock pins into the cache"],
    ["lllm install --frozen --trust", "in CI: fail if the manifest and the lock disagree"],
  ],
  remove: [
    ["lllm remove weather", "out of the manifest and the lock (by alias or name)"],
    ["lllm remove npm:@acme/weather@^1.2.0", "by its source"],
  ],
  update: [
    ["lllm update", "every package, within its range or ref"],
    ["lllm update weather", "one package (new code asks again)"],
  ],
  list: [
    ["lllm list", "the project's packages: source, version, code, who trusted it"],
    ["lllm list --json", "the same as JSON"],
  ],
  outdated: [
    ["lllm outdated", "what `lllm update` would change"],
    ["lllm outdated --json", "the same as JSON"],
  ],
  pack: [
    ["lllm pack packages-example/search", "a .tgz of a package, its files listed"],
    ["lllm pack -o /tmp/search.tgz packages-example/search", "written where you say"],
  ],
  publish: [
    ["lllm publish --to npm", "with npm's own publish (its registry and login)"],
    ["lllm publish packages-example/search --to oci://ghcr.io/acme/search:0.1.0", "to an OCI registry"],
  ],
};

/** The Examples section ending a command's `--help`. */
export function examplesText(examples: ReadonlyArray<readonly [string, string]>, dim: (text: string) => string = (text) => text, bold: (text: string) => string = (text) => text): string {
  return `\n${bold("Examples:")}\n${examples.map(([command, what]) => `  ${dim(`# ${what}`)}\n  $ ${command}`).join("\n")}\n`;
}

/** The path of a command below the program: `tools list`; the program itself is "". */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/** End every command's help with its examples (the program's included); `dim` styles for the stream it goes to. */
export function addExamples(program: Command, paint: (style: "dim" | "bold", text: string, stream: NodeJS.WriteStream) => string): void {
  const visit = (command: Command): void => {
    const examples = HELP_EXAMPLES[commandPath(command)];
    if (examples) command.addHelpText("after", (context) => {
      const stream = context.error ? process.stderr : process.stdout;
      return examplesText(examples, (text) => paint("dim", text, stream), (text) => paint("bold", text, stream));
    });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
